#!/usr/bin/env python3
"""bench/compare's own code: the tables and Markdown from made-up records,
bench/update-readme on a scratch README, and a quick run of the ndperf
runner against this build (every OpenND kind of row present, figures
positive). Results are never judged. Usage: compare_test.py BUILD_DIR"""

import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "bench"))
sys.dont_write_bytecode = True

from comparelib import fabric_rma, latency_pairs, mpi, pairs, report, tables, verbs_vm  # noqa: E402
from comparelib.common import record  # noqa: E402

BUILD = os.environ.get("OPENND_TEST_BUILD_DIR") or os.path.join(REPO, "build")


def made_up():
    r = [record("ndbaseline", "raw shm memcpy", "shm", "pp", "latency", 8, 0.25),
         record("ndbaseline", "raw shm memcpy", "shm", "bw", "bandwidth", 1 << 20, 20.0),
         record("ndperf", "OpenND send (shm)", "shm", "send_lat", "latency", 8, 1.0),
         record("ndperf", "OpenND send (shm)", "shm", "send_bw", "bandwidth", 1 << 20, 5.0),
         record("ndperf", "OpenND send (shm)", "shm", "send_bw", "msgrate", 8, 3.5),
         record("ndbaseline", "raw CMA write", "cma", "bw", "bandwidth", 1 << 20, 16.0),
         record("ndperf", "OpenND write (shm)", "shm", "write_bw", "bandwidth", 1 << 20, 15.2),
         record("ndperf", "OpenND write (tcp)", "tcp", "write_bw", "bandwidth", 1 << 20, 2.0),
         record("ndperf", "OpenND Register (1 thread)", "shm", "register", "registration", 4096, 4.5,
                dereg_median=1.7, rate_per_s=150000),
         record("ndperf", "OpenND connect (shm, 16 at once)", "shm", "connect", "connect", 0, 1300.0, median_us=8000.0,
                p99_us=12000.0),
         record("libfabric", "libfabric tcp (rdm)", "tcp", "pp", "latency", 8, error="it broke")]
    return {"quick": True, "generated": "2026-11-30T10:00:00", "machine": {"cpu_model": "cpu", "cpus": 2},
            "tools": {}, "lat_sizes": [8], "bw_sizes": [1 << 20], "notes": ["tcp left out"], "records": r}


class Tables(unittest.TestCase):
    def test_sections_and_ratios(self):
        doc = made_up()
        text = tables.text(doc["records"], doc["lat_sizes"], doc["bw_sizes"], doc["notes"])
        for want in ("Latency and bandwidth", "Message rate", "Memory registration", "Connection setup",
                     "OpenND send (shm)", "failures:", "it broke", "tcp left out"):
            self.assertIn(want, text)
        main = tables.main_section(doc["records"], [8], [1 << 20])
        row = next(r for r in main[2] if r[0] == "OpenND send (shm)")
        self.assertEqual(row[-3:], ["4.000", "0.250", "-"])  # 1.0 / 0.25 and 5 / 20; a Send is no CMA write
        write = next(r for r in main[2] if r[0] == "OpenND write (shm)")
        self.assertEqual(write[-2:], ["0.760", "0.950"])  # 15.2 / 20 and 15.2 / 16 (raw CMA write)
        tcp = next(r for r in main[2] if r[0] == "OpenND write (tcp)")
        self.assertEqual(tcp[-1], "-")  # TCP is not made of CMA
        failed = next(r for r in main[2] if r[0] == "libfabric tcp (rdm)")
        self.assertEqual(failed[1], "FAIL")

    def test_markdown(self):
        md = tables.markdown(made_up())
        self.assertTrue(md.startswith("`bench/compare --quick` on cpu, 2 CPUs"))
        self.assertIn("| OpenND connect (shm, 16 at once) | 1300 | 8000 | 12000 |", md)
        self.assertIn("- failed: libfabric tcp (rdm)", md)
        for line in md.splitlines():
            if line.startswith("|"):
                self.assertTrue(line.endswith("|"), line)


def chart_doc():
    r = [record("ndperf", "OpenND send (shm)", "shm", "send_lat", "latency", s, v) for s, v in ((8, 0.2), (4096, 0.9))]
    r += [record("ucx", "UCX posix tag", "posix", "tag_lat", "latency", s, v) for s, v in ((8, 0.3), (4096, 1.1))]
    r += [record("ndbaseline", "raw shm memcpy", "shm", "pp", "latency", 8, 0.06),
          record("ndbaseline", "raw TCP busy-poll", "tcp4-busypoll", "pp", "latency", 8, 5.0),  # a raw line alone
          record("ucx", "UCX tcp tag", "tcp", "tag_lat", "latency", 8, error="it broke"),
          record("paired", "OpenND send (shm)", "shm", "half round trip", "paired_latency", 8, 0.12, low=0.11,
                 high=0.3, rounds=5),
          record("paired", "UCX posix tag", "shm", "half round trip", "paired_latency", 8, 0.15, low=0.14,
                 high=0.2, rounds=5),
          record("paired", "OpenND send (shm)", "shm", "messages", "paired_rate", 8, 10.0, low=9, high=11, rounds=5),
          record("paired", "UCX posix tag", "shm", "messages", "paired_rate", 8, 14.0, low=12, high=15, rounds=5)]
    return {"quick": True, "generated": "2026-12-04T10:00:00", "machine": {"cpu_model": "cpu", "cpus": 2},
            "tools": {}, "lat_sizes": [8, 4096], "bw_sizes": [1 << 20], "notes": [], "records": r}


class Charts(unittest.TestCase):
    def test_one_chart_per_question_with_its_own_lines(self):
        plan = {c["name"]: c for c in report.chart_plan(chart_doc())}
        # TCP latency has only the raw line (UCX's failed): no chart.
        self.assertEqual(sorted(plan), ["paired-latency", "paired-rate", "shm-latency"])
        self.assertEqual([(label, raw) for label, _, raw in plan["shm-latency"]["lines"]],
                         [("OpenND send (shm)", False), ("UCX posix tag", False), ("raw shm memcpy", True)])
        self.assertEqual(plan["shm-latency"]["lines"][0][1], [(8, 0.2), (4096, 0.9)])
        self.assertIn("lower is better", plan["shm-latency"]["title"])
        # Bars: the best first, the range kept.
        self.assertEqual([b[0] for b in plan["paired-latency"]["bars"]], ["OpenND send (shm)", "UCX posix tag"])
        self.assertEqual([b[0] for b in plan["paired-rate"]["bars"]], ["UCX posix tag", "OpenND send (shm)"])
        self.assertEqual(plan["paired-rate"]["bars"][0][1:], (14.0, 12, 15))
        self.assertEqual(plan["paired-rate"]["rounds"], 5)

    def test_each_chart_is_drawn(self):
        with tempfile.TemporaryDirectory() as d:
            results = os.path.join(d, "results.json")
            with open(results, "w") as f:
                json.dump(chart_doc(), f)
            written, why = report.draw_charts(results, d)
            self.assertIsNone(why, "the charts need python3-matplotlib (scripts/test.sh installs it)")
            self.assertEqual(sorted(os.path.basename(p) for p in written),
                             ["chart-paired-latency.png", "chart-paired-rate.png", "chart-shm-latency.png"])
            for p in written:
                with open(p, "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", p)

    def test_the_markdown_shows_the_charts(self):
        doc = chart_doc()
        doc["charts"] = ["chart-shm-latency.png", "chart-paired-rate.png"]
        md = tables.markdown(doc)
        self.assertIn("![shm-latency](docs/bench/chart-shm-latency.png)", md)
        self.assertIn("![paired-rate](docs/bench/chart-paired-rate.png)", md)


class PairedLatency(unittest.TestCase):
    def test_rounds_are_compared_within_themselves(self):
        # Round 2 ran on a slow placement (every figure high); round 3 lost UCX.
        rounds = [{"cacheline": 0.04, "opennd": 0.14, "ucx": 0.20, "mpi": 0.13},
                  {"cacheline": 0.20, "opennd": 0.34, "ucx": 0.30, "mpi": 0.40},
                  {"cacheline": 0.05, "opennd": 0.13, "mpi": 0.17}]
        got = {r["label"]: r for r in latency_pairs.summarise(rounds)}
        nd, ucx, cl = got["OpenND send (shm)"], got["UCX posix tag"], got["raw cache-line flag"]
        self.assertEqual((nd["kind"], nd["unit"], nd["size"], nd["rounds"]), ("paired_latency", "us", 8, 3))
        self.assertAlmostEqual(nd["value"], 0.14)
        self.assertEqual((nd["low"], nd["high"]), (0.13, 0.34))
        self.assertAlmostEqual(nd["above_cacheline"], 0.10)  # median of 0.10, 0.14, 0.08
        self.assertAlmostEqual(nd["ratio_to_ucx"], (0.14 / 0.20 + 0.34 / 0.30) / 2)  # the two rounds with UCX
        self.assertEqual((nd["ahead_of_ucx"], nd["paired_with_ucx"]), (1, 2))
        self.assertEqual((nd["ahead_of_mpi"], nd["paired_with_mpi"]), (2, 3))  # behind only in round 1
        self.assertEqual(ucx["rounds"], 2)
        self.assertAlmostEqual(ucx["above_cacheline"], (0.16 + 0.10) / 2)
        self.assertNotIn("ratio_to_ucx", ucx)
        self.assertNotIn("ahead_of_mpi", got["Open MPI sm (vader)"])
        self.assertNotIn("above_cacheline", cl)
        self.assertNotIn("OpenND send (shm, recv first)", got)  # never measured: no row
        self.assertNotIn("OpenND send (shm)", {r["label"] for r in latency_pairs.summarise(rounds)
                                               if r["kind"] == "paired_rate"})  # no rate measured either
        section = tables.paired_latency_section(list(got.values()))
        row = next(r for r in section[2] if r[0] == "OpenND send (shm)")
        self.assertEqual(row[1:], ["0.140", "0.130-0.340", "3", "0.100", "0.917 (0.700-1.133)",
                                   "1/2 UCX, 2/3 Open MPI"])

    def test_message_rate_in_the_same_rounds_higher_is_ahead(self):
        rounds = [{"opennd_rate": 10.0, "ucx_rate": 15.0, "mpi_rate": 8.0, "opennd_recv_first": 0.2, "ucx": 0.25},
                  {"opennd_rate": 12.0, "ucx_rate": 10.0, "mpi_rate": 14.0, "opennd_recv_first": 0.3, "ucx": 0.2},
                  {"opennd_rate": 11.0, "mpi_rate": 9.0}]
        out = latency_pairs.summarise(rounds)
        rate = {r["label"]: r for r in out if r["kind"] == "paired_rate"}
        nd = rate["OpenND send (shm)"]
        self.assertEqual((nd["unit"], nd["value"], nd["rounds"]), ("Mmsg/s", 11.0, 3))
        self.assertEqual((nd["ahead_of_ucx"], nd["paired_with_ucx"]), (1, 2))  # 12 > 10 only
        self.assertEqual((nd["ahead_of_mpi"], nd["paired_with_mpi"]), (2, 3))  # 10 > 8, 11 > 9
        self.assertAlmostEqual(nd["ratio_to_ucx"], (10 / 15 + 12 / 10) / 2)
        first = next(r for r in out if r["label"] == "OpenND send (shm, recv first)")
        self.assertEqual(first["kind"], "paired_latency")
        self.assertEqual((first["ahead_of_ucx"], first["paired_with_ucx"]), (1, 2))  # 0.2 < 0.25 only
        self.assertAlmostEqual(first["ratio_to_ucx"], (0.2 / 0.25 + 0.3 / 0.2) / 2)
        row = tables.paired_rate_section(out)[2][0]
        self.assertEqual(row, ["OpenND send (shm)", "11.00", "10.00-12.00", "3", "0.933 (0.667-1.200)",
                               "1/2 UCX, 2/3 Open MPI"])

    def test_a_tool_that_always_failed_is_a_failed_row(self):
        self.assertEqual(latency_pairs.summarise([{"cacheline": 0.04}, {}])[0]["label"], "raw cache-line flag")
        failed = record("paired", "UCX posix tag", "shm", "half round trip", "paired_latency", 8, error="gone")
        row = tables.paired_latency_section([failed])[2][0]
        self.assertEqual(row[:2], ["UCX posix tag", "FAIL"])

    def test_mpi_bench_builds_and_runs(self):
        with tempfile.TemporaryDirectory() as d:
            exe, why = mpi.build(d)
            if why:
                self.skipTest(why)
            lat = mpi.measure(exe, "lat", 8, 2000, 120)
            self.assertEqual((lat["tool"], lat["test"], lat["size"], lat["iters"]), ("mpi_bench", "lat", 8, 2000))
            self.assertTrue(0 < lat["min_us"] <= lat["median_us"] <= lat["p99_us"], lat)
            bw = mpi.measure(exe, "bw", 65536, 1000, 120, 32)
            self.assertEqual((bw["test"], bw["size"], bw["iters"], bw["window"]), ("bw", 65536, 1000, 32))
            self.assertTrue(bw["gbps"] > 0 and bw["gbps_median"] > 0 and bw["seconds"] > 0, bw)
            self.assertAlmostEqual(bw["mmsgps"] * 1e6 * 65536 / 1e9, bw["gbps"], delta=bw["gbps"] * 1e-3)
            for bad in (["lat", "8"], ["bw", "8", "10", "0"], ["nothing", "8", "10"]):
                with self.assertRaises(RuntimeError):  # refused (exit 2), not a hang
                    mpi.measure(exe, bad[0], bad[1], bad[2] if len(bad) > 2 else 0, 120,
                                bad[3] if len(bad) > 3 else None)
            one_rank = subprocess.run(["mpirun", "-np", "1", exe, "lat", "8", "10"], capture_output=True, timeout=120,
                                      env=dict(os.environ, **mpi.ENV))
            self.assertEqual(one_rank.returncode, 2)


class BusyCore(unittest.TestCase):
    def test_rounds_next_to_a_busy_core_say_so_and_the_spinner_goes(self):
        from comparelib import common
        rounds = [{"raw": {f"cma-read-bw@{1 << 20}": 10.0}, f"send@{1 << 20}": 5.0, "ucx": 4.0}]
        labels = {r["label"] for r in pairs.summarise(rounds, busy=True)}
        self.assertIn("OpenND send (shm) 1 MiB ×CMA, paired, busy core", labels)
        self.assertIn("UCX cma+posix tag 1 MiB ×CMA, paired, busy core", labels)
        lat = latency_pairs.summarise([{"opennd": 0.2, "ucx": 0.3}], busy=True)
        self.assertEqual({r["label"] for r in lat}, {"OpenND send (shm), busy core", "UCX posix tag, busy core"})
        with common.busy_core(False) as core:
            self.assertIsNone(core)
        before = set(os.listdir("/proc"))
        with common.busy_core() as core:
            self.assertIn(core, os.sched_getaffinity(0))
            spinners = [p for p in set(os.listdir("/proc")) - before if p.isdigit()]
            self.assertTrue(spinners, "no spinning process")
        for pid in spinners:
            self.assertFalse(os.path.exists(f"/proc/{pid}/status") and
                             "python" in open(f"/proc/{pid}/status").read().split("\n")[0],
                             "the spinner outlived the block")


class PairedOneSided(unittest.TestCase):
    def test_write_and_read_against_their_floor_and_the_send_of_their_round(self):
        rounds = [{"opennd": 0.1, "nd_write": 1.5, "cma_write": 1.0, "nd_read": 2.0, "cma_read": 1.6},
                  {"opennd": 0.2, "nd_write": 1.2, "cma_write": 1.2, "nd_read": 1.8},  # no raw read this round
                  {"opennd": 0.1, "nd_write": 1.4, "cma_write": 1.0, "ucx": 0.1}]
        got = {r["label"]: r for r in latency_pairs.summarise(rounds) if r["kind"] == "paired_onesided"}
        write = got["OpenND write (shm)"]
        self.assertEqual((write["unit"], write["size"], write["rounds"]), ("us", 8, 3))
        self.assertAlmostEqual(write["value"], 1.4)
        self.assertAlmostEqual(write["over_floor"], 1.4)  # 1.5, 1.0, 1.4
        self.assertAlmostEqual(write["over_send"], 14.0)  # 15, 6, 14: each round against its own Send
        self.assertNotIn("ratio_to_ucx", write)  # a Write is not set against UCX's tag ping-pong
        read = got["OpenND read (shm, one Read)"]
        self.assertEqual(read["rounds"], 2)
        self.assertAlmostEqual(read["over_floor"], 1.25)  # only the round with both
        self.assertNotIn("over_floor", got["raw CMA write ping-pong"])
        row = next(r for r in tables.paired_onesided_section(list(got.values()))[2] if r[0] == "OpenND write (shm)")
        self.assertEqual(row[1:4], ["1.400", "1.200-1.500", "3"])
        self.assertTrue(row[4].startswith("1.400 (1.000-1.500)"), row[4])


class PairedBandwidth(unittest.TestCase):
    def test_each_row_against_its_own_raw_copy_in_its_own_round(self):
        M = 1 << 20
        raw = {f"cma-write-bw@{M}": 10.0, f"cma-read-bw@{M}": 12.0, "cma-write-bw@4096": 2.0}
        rounds = [{"raw": raw, f"write@{M}": 9.0, f"read@{M}": 12.0, f"send@{M}": 11.0, "ucx": 10.0, "mpi": 12.0,
                   "write@4096": 1.5},
                  {"raw": {f"cma-write-bw@{M}": 5.0, f"cma-read-bw@{M}": 6.0}, f"write@{M}": 5.0, f"read@{M}": 5.4,
                   f"send@{M}": 6.0, "ucx": 5.0, "mpi": 5.5, "write@4096": 1.0},  # no raw 4 KiB this round
                  {"raw": raw, f"write@{M}": 10.0, f"read@{M}": 11.4, f"send@{M}": 11.4, "mpi": 11.0,
                   "write@4096": 2.0}]  # UCX failed
        got = {r["label"]: r for r in pairs.summarise(rounds)}
        small = got["OpenND write (shm) 4 KiB ×CMA, paired"]
        self.assertEqual((small["size"], small["rounds"], small["cma"]), (4096, 2, "cma-write-bw"))
        self.assertAlmostEqual(small["value"], 0.875)  # 0.75 and 1.0: each round against its own raw copy
        self.assertNotIn("OpenND read (shm) 64 KiB ×CMA, paired", got)  # never measured
        send = got["OpenND send (shm) 1 MiB ×CMA, paired"]
        self.assertEqual((send["kind"], send["size"], send["rounds"], send["cma"]), ("ratio", 1 << 20, 3, "cma-read-bw"))
        self.assertAlmostEqual(send["value"], 11.4 / 12)  # median of 11/12, 6/6, 11.4/12
        self.assertEqual((send["low"], send["high"]), (11.0 / 12, 1.0))
        self.assertEqual((send["ahead_of_ucx"], send["paired_with_ucx"]), (2, 2))
        self.assertEqual((send["ahead_of_mpi"], send["paired_with_mpi"]), (2, 3))  # behind only in round 1
        write = got["OpenND write (shm) 1 MiB ×CMA, paired"]
        self.assertAlmostEqual(write["value"], 1.0)  # 0.9, 1.0, 1.0: against raw CMA *write*
        self.assertAlmostEqual(write["gbps"], 9.0)
        self.assertNotIn("ahead_of_ucx", write)
        self.assertEqual(got["UCX cma+posix tag 1 MiB ×CMA, paired"]["rounds"], 2)
        row = next(r for r in tables.paired_section(list(got.values()))[2] if r[0].startswith("OpenND send"))
        self.assertEqual(row[1:], ["0.950", "0.917-1.000", "3", "11.00", "12.00", "2/2 UCX, 2/3 Open MPI"])

    def test_raw_rate_is_bytes_over_time(self):
        # Two 1 MiB calls at 10 and 5 GB/s: 2 MiB in 0.1 + 0.2 ms, not the mean 7.5.
        self.assertAlmostEqual(pairs.overall_rate([10.0, 5.0]), 2 / (1 / 10 + 1 / 5))
        self.assertIsNone(pairs.overall_rate([]))
        self.assertIsNone(pairs.overall_rate([3.0, 0.0]))


class FabricRma(unittest.TestCase):
    def test_json_line_to_record(self):
        out = ("some provider warning\n"
               '{"tool":"fi_rma_bw","provider":"tcp;ofi_rxm","op":"read","size":1048576,"iters":2000,'
               '"window":32,"gbps":1.25,"gbps_median":1.5,"windows":62,"seconds":1.6,"mr_mode":"none"}\n')
        doc = fabric_rma.parse_fi_rma_bw(out)
        r = fabric_rma.record_of(doc, ["fi_rma_bw", "--op", "read"])
        self.assertEqual((r["source"], r["label"], r["transport"], r["kind"], r["size"], r["unit"]),
                         ("libfabric", "libfabric tcp read", "tcp", "bandwidth", 1 << 20, "GB/s"))
        self.assertEqual((r["status"], r["value"], r["statistic"], r["overall"]), ("ok", 1.5, "median", 1.25))
        self.assertEqual((r["iterations"], r["window"], r["provider"]), (2000, 32, "tcp;ofi_rxm"))
        self.assertIsNone(fabric_rma.parse_fi_rma_bw("fi_rma_bw (initiator): error: fi_getinfo: ...\n"))

    def test_send_message_rate_rows(self):
        exe = os.path.join(BUILD, "bin", "fi_rma_bw")
        if not os.access(exe, os.X_OK):
            self.skipTest(f"no fi_rma_bw in {BUILD}/bin (libfabric-dev not installed)")

        class Settings:
            quick = True
            run_timeout = 60

            def log(self, _):
                pass

        rows = fabric_rma.libfabric_msgrate(Settings(), exe)
        self.assertEqual([r["label"] for r in rows], ["libfabric shm send", "libfabric tcp send"])
        for r in rows:  # every Send arrived (the tool exits 1 otherwise) and was timed
            self.assertEqual((r["status"], r["kind"], r["size"]), ("ok", "msgrate", 8), r)
            self.assertTrue(math.isfinite(r["value"]) and r["value"] > 0, r)


class VerbsAgainstPerftest(unittest.TestCase):
    ND = ('[\n {"tool":"ndperf","test":"send_lat","size":8,"median_us":12.0},\n'
          ' {"tool":"ndperf","test":"send_lat","size":8,"median_us":99.0}\n]\n')
    LAT = (" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]\n"
           " 8       1000          9.81           201.05       10.00    \t       11.22\n")
    BW = (" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
          " 65536      500              66.93              100.00  \t   0.001600\n")

    def vm_output(self, rounds):
        out = "[    1.0] a kernel line\n"
        for k in range(rounds):
            out += f"@@ nd send_lat 8 {k}\n" + self.ND + "@@ end rc=0\n"
            out += f"@@ perftest send_lat 8 {k}\n" + self.LAT + "@@ end rc=0\n"
            out += f"@@ perftest write_bw 65536 {k}\n" + self.BW + "@@ end rc=0\n"
            out += f"@@ nd write_bw 65536 {k}\n" + '[{"test":"write_bw","gbps":0.2}]' + "\n@@ end rc=0\n"
        return out + "@@ nd read_lat 8 0\nndperf: Connect failed\n@@ end rc=1\n"

    def test_rounds_are_paired_and_higher_is_better(self):
        got, failed = verbs_vm.parse(self.vm_output(3))
        self.assertEqual(got[("nd", "send_lat", 8)], {0: 12.0, 1: 12.0, 2: 12.0}, "the row of the test asked for")
        self.assertEqual(got[("perftest", "send_lat", 8)][1], 10.0, "perftest's t_typical")
        self.assertAlmostEqual(got[("perftest", "write_bw", 65536)][0], 100 * 1048576 / 1e9, msg="MiB/s as GB/s")
        self.assertIn("Connect failed", failed[("nd", "read_lat", 8)])
        rows = {r["operation"]: r for r in verbs_vm.summarise("rxe", got, failed)}
        self.assertAlmostEqual(rows["send_lat"]["value"], 10.0 / 12.0, msg="perftest's latency over ours")
        self.assertEqual(rows["send_lat"]["rounds"], 3)
        self.assertAlmostEqual(rows["write_bw"]["value"], 0.2 / (100 * 1048576 / 1e9), msg="ours over perftest's")
        self.assertEqual(rows["read_lat"]["status"], "failed")
        self.assertIn("Connect failed", rows["read_lat"]["error"])
        section = [s for s in tables.sections(list(rows.values()), [8], [1 << 20]) if "perftest" in s[0]]
        self.assertEqual(len(section), 1)
        self.assertEqual(len(section[0][2]), len(verbs_vm.TESTS))

    def test_the_vm_script_runs_both_tools_every_round_alternating(self):
        script = verbs_vm._script("/b", 2, 100, 50)
        runs = [line.split()[1] for line in script.splitlines() if line.startswith("run ")]
        self.assertEqual(len(runs), 2 * 2 * len(verbs_vm.TESTS))
        self.assertEqual(runs[:2], ["nd", "perftest"])
        self.assertEqual(runs[2 * len(verbs_vm.TESTS):][:2], ["perftest", "nd"], "the second round starts with perftest")
        self.assertIn("--recv-first", script, "send_lat posts as perftest does")


class UpdateReadme(unittest.TestCase):
    def run_tool(self, *args):
        return subprocess.run([sys.executable, os.path.join(REPO, "bench", "update-readme")] + list(args),
                              capture_output=True, text=True, timeout=60)

    def test_replaces_between_markers(self):
        with tempfile.TemporaryDirectory() as d:
            table, readme = os.path.join(d, "table.md"), os.path.join(d, "README.md")
            with open(table, "w") as f:
                f.write("| a |\n|---|\n| 1 |\n")
            with open(readme, "w") as f:
                f.write("top\n<!-- bench/compare:begin -->\nold\n<!-- bench/compare:end -->\nbottom\n")
            p = self.run_tool(table, readme)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(readme) as f:
                self.assertEqual(f.read(), "top\n<!-- bench/compare:begin -->\n| a |\n|---|\n| 1 |\n"
                                           "<!-- bench/compare:end -->\nbottom\n")
            # The run's charts go to docs/bench/ next to the README; an older run's go.
            os.makedirs(os.path.join(d, "docs", "bench"))
            with open(os.path.join(d, "docs", "bench", "chart-old.png"), "wb") as f:
                f.write(b"old")
            for name in ("chart-shm-latency.png", "chart-stale.png"):  # only the linked one is this run's
                with open(os.path.join(d, name), "wb") as f:
                    f.write(b"new")
            with open(table, "a") as f:
                f.write("\n![shm-latency](docs/bench/chart-shm-latency.png)\n")
            self.assertEqual(self.run_tool(table, readme).returncode, 0)
            self.assertEqual(sorted(os.listdir(os.path.join(d, "docs", "bench"))), ["chart-shm-latency.png"])
            os.remove(os.path.join(d, "chart-shm-latency.png"))  # a linked chart missing: nothing changes
            self.assertEqual(self.run_tool(table, readme).returncode, 1)
            with open(readme, "w") as f:
                f.write("no markers\n")
            self.assertEqual(self.run_tool(table, readme).returncode, 1)
        self.assertEqual(self.run_tool().returncode, 2)


class QuickNdperfRun(unittest.TestCase):
    def test_every_opennd_kind(self):
        if not os.access(os.path.join(BUILD, "bin", "ndperf"), os.X_OK):
            self.skipTest(f"no ndperf in {BUILD}/bin")
        with tempfile.TemporaryDirectory() as out:
            p = subprocess.run([sys.executable, os.path.join(REPO, "bench", "compare"), "--quick", "--no-install",
                                "--only", "ndperf", "--markdown", "--build", BUILD, "--out", out],
                               capture_output=True, text=True, timeout=280)
            self.assertEqual(p.returncode, 0, p.stderr[-2000:])
            with open(os.path.join(out, "results.json")) as f:
                doc = json.load(f)
            with open(os.path.join(out, "table.md")) as f:
                md = f.read()
        records = doc["records"]
        bad = [r for r in records if r["status"] != "ok"]
        self.assertEqual(bad, [])
        for r in records:
            self.assertTrue(math.isfinite(r["value"]) and r["value"] > 0, r)
        kinds = {r["kind"] for r in records}
        self.assertEqual(kinds, {"latency", "bandwidth", "msgrate", "registration", "connect"})
        labels = {r["label"] for r in records}
        for want in ("OpenND send (shm)", "OpenND write (copy)", "OpenND write (shm, signaled)", "OpenND send (shm, blocking)",
                     "OpenND write (shm, 4 QPs, 2 threads)", "OpenND Register (2 threads)"):
            self.assertIn(want, labels)
        self.assertIn("| OpenND read (copy) |", md)
        self.assertIn("**Connection setup**", md)


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        BUILD = sys.argv.pop(1)
    unittest.main(verbosity=2)
