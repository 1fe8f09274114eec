//! The blind video-quality study (SPEC section 4): the axes a participant ranks on, the
//! real/fake judgment, the rules of a complete answer, and each participant's seeded
//! random order. No I/O.

use crate::rng::Xoshiro256;
use serde::Serialize;
use std::fmt;

/// The three ranking axes, in the order of the paper's Table 14.
pub const RANK_AXES: [Axis; 3] = [
    Axis::Photorealism,
    Axis::TemporalCoherence,
    Axis::Comprehensibility,
];

/// Fewest and most sources (clips per comparison set) a study may have.
pub const MIN_SOURCES: usize = 2;
pub const MAX_SOURCES: usize = 8;

/// What a response is about: a rank on one axis, or the real/fake label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    Photorealism,
    TemporalCoherence,
    Comprehensibility,
    RealFake,
}

impl Axis {
    pub const ALL: [Axis; 4] = [
        Axis::Photorealism,
        Axis::TemporalCoherence,
        Axis::Comprehensibility,
        Axis::RealFake,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Axis::Photorealism => "photorealism",
            Axis::TemporalCoherence => "temporal_coherence",
            Axis::Comprehensibility => "comprehensibility",
            Axis::RealFake => "real_fake",
        }
    }

    /// How a person reads the axis.
    pub fn title(self) -> &'static str {
        match self {
            Axis::Photorealism => "Photorealism",
            Axis::TemporalCoherence => "Temporal coherence",
            Axis::Comprehensibility => "Scene comprehensibility",
            Axis::RealFake => "Real or generated",
        }
    }

    pub fn parse(s: &str) -> Result<Axis, String> {
        Axis::ALL
            .into_iter()
            .find(|a| a.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown axis `{s}` (photorealism, temporal_coherence, comprehensibility or real_fake)"
                )
            })
    }
}

impl fmt::Display for Axis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a clip is a real video or a generated one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Truth {
    Real,
    Fake,
}

impl Truth {
    pub fn as_str(self) -> &'static str {
        match self {
            Truth::Real => "real",
            Truth::Fake => "fake",
        }
    }

    pub fn parse(s: &str) -> Result<Truth, String> {
        match s {
            "real" => Ok(Truth::Real),
            "fake" => Ok(Truth::Fake),
            other => Err(format!("unknown truth value `{other}` (real or fake)")),
        }
    }
}

/// How clips are shown to participants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Display {
    /// The video itself.
    Video,
    /// A strip of K frames sampled uniformly from the video.
    Strip,
}

impl Display {
    pub fn as_str(self) -> &'static str {
        match self {
            Display::Video => "video",
            Display::Strip => "strip",
        }
    }

    pub fn parse(s: &str) -> Result<Display, String> {
        match s {
            "video" => Ok(Display::Video),
            "strip" => Ok(Display::Strip),
            other => Err(format!("display must be video or strip, not `{other}`")),
        }
    }
}

/// Fewest and most frames in a strip.
pub const MIN_FRAMES: i64 = 2;
pub const MAX_FRAMES: i64 = 32;

/// The label of the i-th clip shown in a set: A, B, C, ...
pub fn label(i: usize) -> String {
    char::from(b'A' + u8::try_from(i.min(25)).unwrap_or(25)).to_string()
}

/// Checks one ranking of n clips: every clip ranked, each rank 1..n given once.
/// `names` says how to call the clips in the message (letters on a page, clip ids in
/// a file).
pub fn check_ranking(axis: Axis, names: &[String], ranks: &[Option<i64>]) -> Result<(), String> {
    let n = names.len();
    let missing: Vec<&str> = names
        .iter()
        .zip(ranks)
        .filter(|(_, r)| r.is_none())
        .map(|(name, _)| name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "{}: no rank for {}; give every clip a rank from 1 to {n}",
            axis.title(),
            missing.join(", ")
        ));
    }
    for (name, r) in names.iter().zip(ranks) {
        if let Some(r) = r
            && !(1..=n as i64).contains(r)
        {
            return Err(format!(
                "{}: rank {r} for {name} is outside 1-{n}",
                axis.title()
            ));
        }
    }
    for rank in 1..=n as i64 {
        let holders: Vec<&str> = names
            .iter()
            .zip(ranks)
            .filter(|(_, r)| **r == Some(rank))
            .map(|(name, _)| name.as_str())
            .collect();
        if holders.len() > 1 {
            return Err(format!(
                "{}: rank {rank} is given to {}; ties are not allowed, each rank from 1 to {n} goes to exactly one clip",
                axis.title(),
                holders.join(" and ")
            ));
        }
    }
    Ok(())
}

/// A participant's answer to one set, clip by clip in the order shown (slot 0 is A):
/// a rank on each of the three axes, and a real/fake label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SetAnswer {
    /// `ranks[axis][slot]`, axes in the order of [`RANK_AXES`].
    pub ranks: [Vec<Option<i64>>; 3],
    pub labels: Vec<Option<Truth>>,
}

impl SetAnswer {
    /// Every problem of an answer for a set of `n` clips (empty when it is complete).
    pub fn problems(&self, n: usize) -> Vec<String> {
        let names: Vec<String> = (0..n).map(label).collect();
        let mut out = Vec::new();
        for (axis, ranks) in RANK_AXES.iter().zip(&self.ranks) {
            if ranks.len() != n {
                out.push(format!(
                    "{}: {} ranks for {n} clips",
                    axis.title(),
                    ranks.len()
                ));
            } else if let Err(m) = check_ranking(*axis, &names, ranks) {
                out.push(m);
            }
        }
        if self.labels.len() != n {
            out.push(format!("{} labels for {n} clips", self.labels.len()));
        } else {
            let missing: Vec<&str> = names
                .iter()
                .zip(&self.labels)
                .filter(|(_, l)| l.is_none())
                .map(|(n, _)| n.as_str())
                .collect();
            if !missing.is_empty() {
                out.push(format!(
                    "{}: say whether {} is real or generated",
                    Axis::RealFake.title(),
                    missing.join(", ")
                ));
            }
        }
        out
    }
}

/// A participant's order: the sets shuffled, and within each set the clips shuffled,
/// drawn from the study's seed and the participant, so the same inputs always give the
/// same order. Returns, for each position, the set index and the order of its clips.
pub fn participant_order(
    seed: u64,
    participant_id: i64,
    sets: usize,
    clips_per_set: usize,
) -> Vec<(usize, Vec<usize>)> {
    let mixed = seed ^ (participant_id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut rng = Xoshiro256::seed_from_u64(mixed);
    let mut order: Vec<usize> = (0..sets).collect();
    rng.shuffle(&mut order);
    order
        .into_iter()
        .map(|s| {
            let mut clips: Vec<usize> = (0..clips_per_set).collect();
            rng.shuffle(&mut clips);
            (s, clips)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        (0..4).map(label).collect()
    }

    #[test]
    fn a_ranking_is_a_permutation() {
        let ok = [Some(2), Some(1), Some(4), Some(3)];
        assert_eq!(check_ranking(Axis::Photorealism, &names(), &ok), Ok(()));
        let tie = [Some(2), Some(1), Some(2), Some(3)];
        let e = check_ranking(Axis::Photorealism, &names(), &tie).unwrap_err();
        assert!(e.contains("rank 2 is given to A and C"), "{e}");
        let gap = [Some(2), None, Some(4), Some(3)];
        let e = check_ranking(Axis::TemporalCoherence, &names(), &gap).unwrap_err();
        assert!(e.contains("no rank for B"), "{e}");
        let out = [Some(5), Some(1), Some(2), Some(3)];
        let e = check_ranking(Axis::Comprehensibility, &names(), &out).unwrap_err();
        assert!(e.contains("outside 1-4"), "{e}");
    }

    #[test]
    fn orders_are_reproducible_permutations_and_differ_between_participants() {
        let a = participant_order(42, 7, 50, 4);
        assert_eq!(a, participant_order(42, 7, 50, 4));
        let mut sets: Vec<usize> = a.iter().map(|(s, _)| *s).collect();
        sets.sort_unstable();
        assert_eq!(sets, (0..50).collect::<Vec<_>>());
        for (_, clips) in &a {
            let mut c = clips.clone();
            c.sort_unstable();
            assert_eq!(c, vec![0, 1, 2, 3]);
        }
        assert_ne!(a, participant_order(42, 8, 50, 4));
        assert_ne!(a, participant_order(43, 7, 50, 4));
    }

    #[test]
    fn every_clip_position_is_used_about_equally() {
        // Over many participants each source lands on each letter about a quarter of
        // the time: the letters carry no hint of the source.
        let mut counts = [[0usize; 4]; 4];
        for p in 0..400 {
            for (_, clips) in participant_order(9, p, 10, 4) {
                for (letter, &source) in clips.iter().enumerate() {
                    counts[source][letter] += 1;
                }
            }
        }
        for row in counts {
            for c in row {
                assert!((800..1200).contains(&c), "{counts:?}");
            }
        }
    }
}
