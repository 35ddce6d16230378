"""Writing the answer can fail too (a full device, a name too long, a file where a folder should be, a key no
encoding holds): each is one line and exit 2, never a traceback, and a failed --out leaves no half-written Result."""

import errno
import subprocess
import sys

import pytest

import explorer.cli as cli
from explorer.cli import main

COMMANDS = [["run", "--synthetic", "voltsp"], ["curve", "--synthetic", "voltsp", "--delays", "0,1"],
            ["export", "--synthetic", "voltsp", "--to", "flink-java"], ["compare", "--synthetic", "voltsp",
                                                                          "--presets", "voltsp,flink"]]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[0])
def test_standard_output_on_a_full_device_is_one_line(argv):
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "explorer", *argv], stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == ["error: cannot write the output: No space left on device"]


def test_an_out_name_too_long_is_refused_before_the_run(tmp_path, capsys):
    assert main(["run", "--synthetic", "voltsp", "--out", str(tmp_path / ("x" * 300))]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot use this directory (File name too long)" in err


def test_a_checkpoint_that_is_a_file_is_refused_before_spark_starts(tmp_path, capsys):
    taken = tmp_path / "afile"
    taken.write_text("")
    assert main(["run", "--synthetic", "voltsp", "--engine", "spark", "--checkpoint", str(taken)]) == 2
    assert capsys.readouterr().err == f"error: --checkpoint {taken}: is a file; give a directory\n"


def test_a_key_no_encoding_holds_is_escaped_in_the_table_and_the_files(tmp_path, capsys):
    events = tmp_path / "lone.jsonl"
    events.write_text('{"id":"a","key":"\\ud800","event_time":1}\n{"id":"b","key":"k","event_time":2}\n')
    done = subprocess.run([sys.executable, "-m", "explorer", "run", str(events)], capture_output=True, timeout=120)
    assert done.returncode == 0 and b"\\ud800" in done.stdout, done.stderr
    assert main(["run", str(events), "--out", str(tmp_path / "out")]) == 0
    assert "a,\\ud800," in (tmp_path / "out" / "events.csv").read_text()


def test_a_failed_write_leaves_no_half_written_result(tmp_path, capsys, monkeypatch):
    def disk_full(*_args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cli, "_write_windows", disk_full)  # events.csv and assignments.csv are written by then
    out = tmp_path / "out"
    assert main(["run", "--synthetic", "voltsp", "--out", str(out)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert list(out.iterdir()) == []  # nothing half-written, and the staging folder is gone
