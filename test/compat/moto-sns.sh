#!/usr/bin/env bash
# moto 5.2.1's SNS tests (test/compat/moto, see its NOTICE) against Sluice in moto's server mode: starts
# Sluice from the sources on a free loopback port (--in-memory --test-clock, moto's account 123456789012), runs
# pytest on the vendored tests minus test/compat/moto/deselected.txt, stops the server by its PID.
# Needs python3 with moto 5.x, boto3 and pytest. Extra arguments go to pytest (e.g. -k filtering).
# The integration test test/integration/moto-sns-suite.test.ts runs the same suite under `npm test`.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
python=${PYTHON:-python3}
"$python" -c 'import moto, boto3, pytest' || { echo "moto-sns: needs python3 with moto, boto3 and pytest" >&2; exit 2; }
port=$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log=$(mktemp)
cd "$root"
node --conditions=sluice-source --import tsx packages/server/src/cli/main.ts serve --in-memory --test-clock \
  --account 123456789012 --port "$port" --log-level warn >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 300); do
  if "$python" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/health', timeout=1)" 2>/dev/null; then break; fi
  kill -0 "$server" 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.1
done
cd "$root/test/compat/moto"
TEST_SERVER_MODE=true TEST_SERVER_MODE_ENDPOINT="http://127.0.0.1:$port" AWS_ACCESS_KEY_ID=test \
  AWS_SECRET_ACCESS_KEY=test AWS_DEFAULT_REGION=us-east-1 SLUICE_ACCOUNT=123456789012 \
  timeout 900 "$python" -m pytest -p no:cacheprovider -q -rfE tests/test_sns "$@"
