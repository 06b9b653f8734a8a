#!/usr/bin/env bash
# After a failed ctest run: the failed tests again, and for conformance runs
# the failed cases with their messages (from ndconformance's JUnit files),
# so the end of a long CI log says what broke. Usage: failure-summary.sh BUILD_DIR
build=${1:-build}
echo
echo "== failure summary ($build)"
if [ -s "$build/Testing/Temporary/LastTestsFailed.log" ]; then
  sed 's/^[0-9]*:/  failed: /' "$build/Testing/Temporary/LastTestsFailed.log"
fi
command -v python3 >/dev/null || exit 0
python3 - "$build" <<'PY'
import glob, sys, xml.etree.ElementTree as ET
for path in sorted(glob.glob(sys.argv[1] + "/tests/conformance/*.xml")):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        print(f"  {path}: unreadable ({e})")
        continue
    for case in root.iter("testcase"):
        for f in list(case.iter("failure")) + list(case.iter("error")):
            print(f"  {path.rsplit('/', 1)[-1]}: {case.get('classname')}.{case.get('name')} ({case.get('time')} s)")
            text = (f.text or f.get("message") or "").strip().splitlines()
            for line in text[:15]:
                print("      " + line[:200])
PY
exit 0
