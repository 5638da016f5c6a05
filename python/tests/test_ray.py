"""Ray: a study in shards on a local Ray cluster equals the one-process run."""

import json
import subprocess
import sys

import ray

import rulesmith
import rulesmith.ray as rray
from conftest import variant


def test_four_ray_shards_equal_the_one_process_run():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        options = dict(bots=["random", "greedy"], rotate=True, seed=5)
        sharded = rray.simulate(variant("sirius-basic"), 12, 4, **options)
    finally:
        ray.shutdown()
    whole = rulesmith.simulate(variant("sirius-basic"), 12, **options)
    assert sharded == whole
    assert whole["summary"]["games"] == 12


def test_the_shards_match_the_command_line(rulesmith_bin, tmp_path):
    # A shard from Python and shards from the command line merge with each other.
    files = []
    for i in (1, 2):
        part = rulesmith.simulate_shard(variant("sirius-basic"), 12, shard=(i, 2), seed=9)
        f = tmp_path / f"py-{i}.json"
        f.write_text(part)
        files.append(str(f))
    merged = subprocess.run([rulesmith_bin, "merge", "--json", *files], capture_output=True, text=True)
    assert merged.returncode == 0, merged.stderr
    whole = subprocess.run([rulesmith_bin, "--engine", "interpreted", "simulate", variant("sirius-basic"),
                            "--games", "12", "--seed", "9", "--json"], capture_output=True, text=True)
    assert whole.returncode == 0, whole.stderr
    assert merged.stdout == whole.stdout
    assert json.loads(merged.stdout) == rulesmith.simulate(variant("sirius-basic"), 12, seed=9)


def test_the_ray_command_line_runs_a_local_cluster(tmp_path):
    out = tmp_path / "result.json"
    r = subprocess.run([sys.executable, "-m", "rulesmith.ray", "simulate", variant("sirius-basic"),
                        "--games", "8", "--shards", "2", "--seed", "3", "--out", str(out)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text()) == rulesmith.simulate(variant("sirius-basic"), 8, seed=3)
