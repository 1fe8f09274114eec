#!/usr/bin/env python3
"""A generation pipeline's regeneration loop, through Tandem's API with a client
generated from its OpenAPI document (openapi-python-client).

For every clip whose newest version was rejected in Stage 1 (the regeneration list:
scene graph, scenario, the validators' reasons and notes), make a new video and import
it as the clip's new version: the pipeline's own manifest line for the clip with the new
file. The import is one upload (a zip of the lines and their videos) that the server
runs as a job; the job is polled until it ends. The new versions go back to the pair
that rejected them.

Against the demo (`cargo run --release -- demo` prints the admin's token and its data
folder):

    python3 -m venv .venv && .venv/bin/pip install -r examples/python/requirements.txt
    curl -s http://127.0.0.1:8080/api/v1/openapi.json -o openapi.json
    .venv/bin/openapi-python-client generate --path openapi.json \\
        --config examples/python/client-config.yaml --output-path tandem-client
    PYTHONPATH=tandem-client .venv/bin/python examples/python/regeneration_loop.py \\
        --base http://127.0.0.1:8080 --token ADMIN_TOKEN \\
        --manifest DATA_FOLDER/sample-clips/manifest.jsonl

A lab plugs its own generator in with `--generator CMD`: it is run as
`CMD CLIP_ID OUT_FILE` with the clip's regeneration item (JSON) on its standard input,
and writes the new video to OUT_FILE. Without it, a short test clip is rendered with
ffmpeg.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from tandem_client import AuthenticatedClient
from tandem_client.api.exports import list_regeneration
from tandem_client.api.imports import import_upload
from tandem_client.api.jobs import get_job
from tandem_client.models import ErrorBody, Job, JobState, Regeneration, RegenerationItem
from tandem_client.types import File


class Failed(Exception):
    """The server refused something; the message says what."""


def refusal(error: ErrorBody) -> Failed:
    """The server's error in words, with the lines of a refused manifest."""
    problems = "".join(
        f"\n  line {p.line}{f' ({p.field})' if p.field else ''}: {p.message}"
        for p in (error.problems or [])
    )
    return Failed(f"{error.error.value}: {error.detail}{problems}")


def expect(reply, kind):
    """The parsed reply as `kind`, or Failed with the server's error."""
    if isinstance(reply, kind):
        return reply
    if isinstance(reply, ErrorBody):
        raise refusal(reply)
    raise Failed(f"unexpected reply: {reply!r}")


def render_test_clip(item: RegenerationItem, out: Path) -> None:
    """A two-second test pattern (stands in for a lab's video generator)."""
    if shutil.which("ffmpeg") is None:
        raise Failed("ffmpeg is not installed: install it, or pass --generator CMD")
    subprocess.run(
        ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
         "testsrc2=size=320x240:rate=24:duration=2", "-c:v", "mpeg4", "-q:v", "5",
         "-pix_fmt", "yuv420p", str(out)],
        check=True,
    )


def external_generator(command: str):
    """A generator run as `COMMAND CLIP_ID OUT_FILE`, the item's JSON on its stdin."""

    def generate(item: RegenerationItem, out: Path) -> None:
        subprocess.run(
            [*command.split(), item.clip_id, str(out)],
            input=json.dumps(item.to_dict()).encode(),
            check=True,
        )

    return generate


def read_manifest(path: Path) -> dict[str, dict]:
    """The pipeline's own manifest lines, by clip_id."""
    lines = {}
    for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if text.strip():
            line = json.loads(text)
            if "clip_id" not in line:
                raise Failed(f"{path}: line {n} has no clip_id")
            lines[line["clip_id"]] = line
    return lines


def wait(client: AuthenticatedClient, campaign: str, job: Job, timeout: float) -> Job:
    """Polls a job until it has ended."""
    deadline = time.monotonic() + timeout
    while job.state in (JobState.QUEUED, JobState.RUNNING):
        if time.monotonic() > deadline:
            raise Failed(f"job {job.id} has not ended after {timeout:.0f} s")
        time.sleep(0.2)
        job = expect(get_job.sync(campaign, job.id, client=client), Job)
    return job


def regenerate(
    client: AuthenticatedClient,
    campaign: str,
    manifest: dict[str, dict],
    generate,
    timeout: float = 600.0,
) -> Job | None:
    """One turn of the loop: the rejected clips get new videos, imported in one job.
    Returns the ended job, or None when nothing waits for a new version."""
    work = expect(list_regeneration.sync(campaign, client=client), Regeneration)
    if not work.clips:
        print("nothing to regenerate")
        return None
    with tempfile.TemporaryDirectory() as tmp:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            lines = []
            for item in work.clips:
                if item.clip_id not in manifest:
                    raise Failed(f"clip {item.clip_id} is not in the pipeline's manifest")
                reasons = ", ".join(item.reasons) or "no reason given"
                print(f"{item.clip_id} (version {item.version}, {item.outcome}): {reasons}")
                name = f"videos/{item.clip_id}_v{item.version + 1}.mp4"
                out = Path(tmp) / f"{item.clip_id}.mp4"
                generate(item, out)
                archive.write(out, f"batch/{name}")
                lines.append(json.dumps({**manifest[item.clip_id], "file": name}))
            archive.writestr("batch/manifest.jsonl", "\n".join(lines) + "\n")
        body = File(payload=io.BytesIO(buffer.getvalue()), file_name="batch.zip",
                    mime_type="application/zip")
        job = expect(import_upload.sync(campaign, client=client, body=body), Job)
    job = wait(client, campaign, job, timeout)
    if job.state != JobState.DONE:
        raise refusal(job.error)
    summary = job.import_
    print(f"imported: {summary.versions_new} new version(s), {summary.clips_new} new clip(s)")
    return job


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", required=True, help="the server, e.g. http://127.0.0.1:8080")
    p.add_argument("--token", required=True, help="an admin's API token")
    p.add_argument("--campaign", default="default")
    p.add_argument("--manifest", required=True, type=Path,
                   help="the pipeline's manifest (its lines are reused with the new files)")
    p.add_argument("--generator", help="COMMAND run as `COMMAND CLIP_ID OUT_FILE`")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the import")
    args = p.parse_args(argv)
    client = AuthenticatedClient(base_url=args.base, token=args.token, raise_on_unexpected_status=True)
    generate = external_generator(args.generator) if args.generator else render_test_clip
    try:
        regenerate(client, args.campaign, read_manifest(args.manifest), generate, args.timeout)
    except Failed as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
