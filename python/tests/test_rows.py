"""--rows: one row per game, read back with polars (Parquet and JSON Lines)."""

import json
import subprocess

import polars as pl

from conftest import variant


def run(bin_, *args):
    r = subprocess.run([bin_, "--engine", "interpreted", *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_simulate_rows_in_parquet_and_json_lines_agree_with_the_summary(rulesmith_bin, tmp_path):
    pq, jl = tmp_path / "rows.parquet", tmp_path / "rows.jsonl"
    outs = [json.loads(run(rulesmith_bin, "simulate", variant("sirius-lifeboats"), "--games", "25",
                           "--bots", "random,random", "--rotate", "--set", "max_power=5",
                           "--rows", str(p), "--json")) for p in (pq, jl)]
    assert outs[0] == outs[1]
    summary = outs[0]["summary"]
    df = pl.read_parquet(pq)
    lines = pl.read_ndjson(jl)
    assert df.height == lines.height == 25
    assert df["game"].to_list() == list(range(1, 26))
    assert df["seed"].to_list() == lines["seed"].to_list()
    assert df["winner"].to_list() == lines["winner"].to_list()
    wins = df.group_by("winner").len()
    for seat in summary["seats"]:
        n = wins.filter(pl.col("winner") == seat["seat"])["len"].sum()
        assert n == seat["wins"]["count"]
    assert df["turns"].mean() == summary["turns"]["mean"]
    assert df["params"].struct.field("max_power").unique().to_list() == [5]
    assert df["bots"].list.len().to_list() == [2] * 25
    for c in summary["counters"]:
        assert df["counters"].struct.field(c["name"]).sum() == c["total"]


def test_compare_rows_pair_the_games_of_both_sides(rulesmith_bin, tmp_path):
    pq = tmp_path / "cmp.parquet"
    run(rulesmith_bin, "compare", variant("sirius-basic"), variant("sirius-basic"), "--set-b", "start_power=3",
        "--games", "10", "--rows", str(pq), "--json")
    df = pl.read_parquet(pq)
    assert df.height == 20
    a, b = df.filter(pl.col("side") == "A"), df.filter(pl.col("side") == "B")
    assert a["seed"].to_list() == b["seed"].to_list()
    assert b["params"].struct.field("start_power").unique().to_list() == [3]
    assert a["params"].struct.field("start_power").unique().to_list() == [6]
