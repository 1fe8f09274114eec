#!/usr/bin/env python3
"""The client generated from Tandem's OpenAPI document, tried on every role's main
operations against a running server (the integration test `python_client` runs it):
an admin's import by upload, the validators' queues, items, clip bytes and verdicts, the
author's split and resolution, the regeneration loop (`regeneration_loop.py`), the
statistics and the exports. Every reply must parse into its generated type: no None
where the server sent a body, no key the type does not know, no untyped dictionary
outside the free-form fields (a clip's scene graph and scenario), and the typed object
must give back exactly the JSON the server sent.

    check_client.py SETUP.json

SETUP.json: {"base", "campaign", "admin", "validators": [TOKEN, TOKEN], "author",
"work": a folder to write in}.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import sys
import zipfile
from datetime import datetime
from pathlib import Path

import attrs
import httpx

import regeneration_loop
from tandem_client import AuthenticatedClient
from tandem_client.api.authors import get_split, list_splits, resolve_split
from tandem_client.api.campaigns import get_progress, get_protocol, list_campaigns
from tandem_client.api.accounts import me
from tandem_client.api.exports import export_file, export_retained
from tandem_client.api.imports import import_upload
from tandem_client.api.jobs import download_job_result, get_job, list_jobs
from tandem_client.api.review import get_item, get_queue, list_queue_items, record_verdict
from tandem_client.api.statistics import get_stats
from tandem_client.models import (
    Campaigns, ErrorBody, ExportFileKind, Job, JobState, Jobs, Me, Progress, ProtocolView,
    QueueItems, QueueStatus, Recorded, Resolution, ResolutionBody, ResolutionReply, SplitItem,
    Splits, Stage, StatsReply, ValidatorItem, Verdict, VerdictBody,
)
from tandem_client.types import File, Unset

TASK = "MC_F_EGO_STA"


def fake_mp4(seed: str) -> bytes:
    """Bytes that pass for an MP4 file, different for every seed (as the Rust tests')."""
    return b"\0\0\0\x18ftypisom\0\0\0\0isommp41" + seed.encode()


def line(clip: str, file: str) -> dict:
    return {
        "clip_id": clip, "task": TASK, "file": file,
        "theme": "Wizard's Enchantment Altar", "generator": "test/generator",
        "scene_graph": {"objects": ["key", "candle"]}, "scenario": {"event": "the candle is lit"},
        "questions": [{
            "question_id": f"{clip}_OE", "qa_type": "OE",
            "question": f"Which object appears in {clip}?",
            "options": ["a brass key", "a red candle", "a glass orb", "a feather quill"],
            "answer": 2,
        }],
    }


def is_model(x) -> bool:
    return attrs.has(type(x)) and hasattr(x, "additional_properties")


def free_form(x) -> bool:
    """A model of a free-form object: no fields of its own, every key its own."""
    return [f.name for f in attrs.fields(type(x))] == ["additional_properties"] and all(
        not is_model(v) for v in x.additional_properties.values()
    )


def untyped(x, path: str) -> list[str]:
    """Where a parsed reply holds what its type does not say."""
    if isinstance(x, Unset) or x is None or isinstance(x, (str, int, float, bool)):
        return []
    if isinstance(x, list):
        return [p for i, v in enumerate(x) for p in untyped(v, f"{path}[{i}]")]
    if isinstance(x, dict):
        return [f"{path}: an untyped dictionary"]
    if is_model(x):
        if free_form(x):
            return []
        out = []
        for f in attrs.fields(type(x)):
            if f.name != "additional_properties":
                out += untyped(getattr(x, f.name), f"{path}.{f.name}")
        for k, v in x.additional_properties.items():
            # A map's values are typed models; a stray key of a record is not.
            if not is_model(v):
                out.append(f"{path}[{k!r}]: a key its type does not know")
            else:
                out += untyped(v, f"{path}[{k!r}]")
        return out
    return []  # enums and the like


DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")


def canon(x):
    """JSON with its date-times as instants (`Z` and `+00:00` are one time)."""
    if isinstance(x, dict):
        return {k: canon(v) for k, v in x.items()}
    if isinstance(x, list):
        return [canon(v) for v in x]
    if isinstance(x, str) and DATE_TIME.match(x):
        return datetime.fromisoformat(x)
    return x


def typed(reply, kind, status: int = 200):
    """The parsed reply: of `kind`, complete, and the JSON that was sent."""
    where = f"{reply.status_code} {kind.__name__}"
    if reply.status_code != status:
        raise AssertionError(f"expected {status}, got {where}: {reply.content[:400]!r}")
    sent = json.loads(reply.content)
    parsed = reply.parsed
    if not isinstance(parsed, kind):
        raise AssertionError(f"{where}: parsed as {type(parsed).__name__}: {parsed!r}")
    problems = untyped(parsed, kind.__name__)
    if problems:
        raise AssertionError(f"{where}: " + "; ".join(problems))
    back = parsed.to_dict()
    if canon(back) != canon(sent):
        raise AssertionError(f"{where}: the typed reply gives back\n{back}\nnot\n{sent}")
    return parsed


def upload(admin, campaign: str, files: dict[str, bytes]) -> Job:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    body = File(payload=io.BytesIO(buffer.getvalue()), file_name="batch.zip",
                mime_type="application/zip")
    started = typed(import_upload.sync_detailed(campaign, client=admin, body=body), Job, 202)
    return wait(admin, campaign, started)


def wait(admin, campaign: str, job: Job) -> Job:
    ended = regeneration_loop.wait(admin, campaign, job, 120.0)
    return typed(get_job.sync_detailed(campaign, ended.id, client=admin), Job)


def main(setup_path: str) -> None:
    setup = json.loads(Path(setup_path).read_text())
    base, campaign, work = setup["base"], setup["campaign"], Path(setup["work"])
    client = lambda token: AuthenticatedClient(base_url=base, token=token)  # noqa: E731
    admin, author = client(setup["admin"]), client(setup["author"])
    validators = [client(t) for t in setup["validators"]]

    typed(me.sync_detailed(client=admin), Me)
    typed(list_campaigns.sync_detailed(client=admin), Campaigns)
    typed(get_protocol.sync_detailed(campaign, client=admin), ProtocolView)

    # The admin imports three clips by upload: a job, polled until done.
    lines = [line(c, f"videos/{c}.mp4") for c in ("A", "B", "C")]
    files = {f"batch/videos/{c}.mp4": fake_mp4(c) for c in ("A", "B", "C")}
    files["batch/manifest.jsonl"] = "".join(json.dumps(l) + "\n" for l in lines).encode()
    job = upload(admin, campaign, files)
    assert job.state == JobState.DONE, job
    assert job.import_.clips_new == 3, job.import_
    manifest = work / "manifest.jsonl"
    manifest.write_text(files["batch/manifest.jsonl"].decode())

    # Each validator: queue, items, the clip's bytes by its URL, verdicts.
    # A: both reject; B: both pass; C: split.
    verdicts = {"A": ("reject", "reject"), "B": ("valid", "valid"), "C": ("valid", "reject")}
    for i, v in enumerate(validators):
        q = typed(get_queue.sync_detailed(campaign, Stage.VALUE_1, client=v), QueueStatus)
        assert q.total == 3, q
        items = typed(list_queue_items.sync_detailed(campaign, Stage.VALUE_1, client=v), QueueItems)
        assert sorted(e.item_id for e in items.items) == ["A", "B", "C"], items
        for clip, pair in verdicts.items():
            item = typed(get_item.sync_detailed(campaign, Stage.VALUE_1, clip, client=v), ValidatorItem)
            got = httpx.get(f"{base}{item.clip.media_url}",
                            headers={"Authorization": f"Bearer {setup['validators'][i]}"})
            assert got.status_code == 200 and got.content == fake_mp4(clip), got
            verdict = Verdict(pair[i])
            body = VerdictBody(verdict=verdict, version=item.clip.version, time_spent_ms=1200)
            if verdict == Verdict.REJECT:
                body.reasons, body.note = ["physical_implausibility"], "the key floats"
            r = typed(record_verdict.sync_detailed(campaign, Stage.VALUE_1, clip, client=v, body=body),
                      Recorded, 201)
            assert r.recorded and r.decision.verdict == verdict, r

    # The author: the split, and its resolution.
    splits = typed(list_splits.sync_detailed(campaign, Stage.VALUE_1, client=author), Splits)
    assert [s.item_id for s in splits.splits] == ["C"], splits
    typed(get_split.sync_detailed(campaign, Stage.VALUE_1, "C", client=author), SplitItem)
    body = ResolutionBody(verdict=Resolution.REJECT, note="the candle flickers")
    typed(resolve_split.sync_detailed(campaign, Stage.VALUE_1, "C", client=author, body=body),
          ResolutionReply, 201)

    # The regeneration loop, as the example runs it: A and C get new versions.
    def generate(item, out: Path) -> None:
        out.write_bytes(fake_mp4(f"{item.clip_id}-v{item.version + 1}"))

    job = regeneration_loop.regenerate(admin, campaign, regeneration_loop.read_manifest(manifest),
                                       generate, 120.0)
    job = typed(get_job.sync_detailed(campaign, job.id, client=admin), Job)
    assert (job.import_.versions_new, job.import_.clips_new) == (2, 0), job.import_
    text = export_file.sync_detailed(campaign, ExportFileKind.REGENERATION, client=admin)
    assert text.status_code == 200 and text.content == b"", text.content

    # The figures and the exports.
    stats = typed(get_stats.sync_detailed(campaign, client=admin), StatsReply)
    assert stats.t11[TASK].reviewed == 3, stats.t11
    typed(get_progress.sync_detailed(campaign, client=admin), Progress)
    csv = export_file.sync_detailed(campaign, ExportFileKind.DECISIONS, client=admin)
    assert csv.status_code == 200 and csv.content.startswith(b"stage,item_id,validator"), csv.content
    started = typed(export_retained.sync_detailed(campaign, client=admin), Job, 202)
    done = wait(admin, campaign, started)
    assert done.state == JobState.DONE and done.result.file_name == f"{campaign}-retained.zip", done
    archive = download_job_result.sync_detailed(campaign, done.id, client=admin)
    assert archive.status_code == 200, archive
    data = archive.parsed.payload.read()
    assert len(data) == done.result.size, (len(data), done.result.size)
    assert hashlib.sha256(data).hexdigest() == done.result.sha256
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    assert any(n.endswith("benchmark.jsonl") for n in names), names
    listed = typed(list_jobs.sync_detailed(campaign, client=admin), Jobs)
    assert [j.kind.value for j in listed.jobs] == ["retained", "import", "import"], listed

    # A refusal parses too: the error, typed.
    refused = get_job.sync_detailed(campaign, "no-such-job", client=admin)
    assert refused.status_code == 404 and isinstance(refused.parsed, ErrorBody), refused
    print("the generated client: every reply typed")


if __name__ == "__main__":
    main(sys.argv[1])
