#!/bin/sh
# Makes the demo's sample clips: twelve 3-second 160x120 WebM (VP9) videos of coloured
# shapes moving over a coloured ground, one per VGenST task, a few KB each; and the two
# known clips.
# Needs ffmpeg with libvpx. Run from this folder: sh make-clips.sh
set -eu
mkdir -p clips
i=0
for spec in \
  "0x2b4c6f red 10+t*40 50+10*sin(t*3)" \
  "0x4f3b2b yellow 70+30*sin(t*2) 10+t*30" \
  "0x2f5f3a white 140-t*40 40" \
  "0x3a2f5f orange 20+t*35 90-t*20" \
  "0x5f2f3a cyan 70 10+t*30" \
  "0x1f1f1f lime 10+t*45 60+20*cos(t*4)" \
  "0x40607f magenta 60+40*cos(t*2) 50" \
  "0x7f6040 blue 130-t*35 20+t*25" \
  "0x305050 pink 10+t*40 20" \
  "0x505030 red 140-t*45 80" \
  "0x603060 yellow 70+50*sin(t) 60+30*sin(t*2)" \
  "0x306030 white 10+t*40 100-t*25"
do
  set -- $spec
  bg=$1; fg=$2; x=$3; y=$4
  out=$(printf 'clips/demo_%02d.webm' "$i")
  ffmpeg -loglevel error -y \
    -f lavfi -i "color=c=$bg:s=160x120:d=3:r=12" \
    -f lavfi -i "color=c=$fg:s=18x18:d=3:r=12" \
    -f lavfi -i "color=c=0xdddddd:s=30x12:d=3:r=12" \
    -filter_complex "[0][2]overlay=x=65:y=100[g];[g][1]overlay=x='$x':y='$y':shortest=1" \
    -c:v libvpx-vp9 -b:v 24k -g 12 -pix_fmt yuv420p -an "$out"
  i=$((i + 1))
done
# The known clips: an orange square that jumps right for frames 17-18 (flawed), and a
# lime one that stands still (sound); neither is a sample clip's video.
for spec in \
  "known_flawed 0x2b4c6f orange if(between(n,17,18),120,10+t*35) 60" \
  "known_sound 0x2f5f3a lime 70 50"
do
  set -- $spec
  name=$1; bg=$2; fg=$3; x=$4; y=$5
  ffmpeg -loglevel error -y \
    -f lavfi -i "color=c=$bg:s=160x120:d=3:r=12" \
    -f lavfi -i "color=c=$fg:s=18x18:d=3:r=12" \
    -f lavfi -i "color=c=0xdddddd:s=30x12:d=3:r=12" \
    -filter_complex "[0][2]overlay=x=65:y=100[g];[g][1]overlay=x='$x':y='$y':shortest=1" \
    -c:v libvpx-vp9 -b:v 24k -g 12 -pix_fmt yuv420p -an "clips/$name.webm"
done
ls -l clips
