#!/usr/bin/env bash
# Build bridge's wheel and use it as a person who installed it would: in a fresh virtual
# environment outside the checkout, from an empty project directory, with nothing of the
# checkout on the path. Run by .ci/run after the test suite; needs .ci/bootstrap.sh first.
#   bash .ci/wheel-check.sh [WORKDIR]     (default: a new temporary directory, removed after)
set -euo pipefail
cd "$(dirname "$0")/.."
checkout=$(pwd)

work=${1:-}
if [ -z "$work" ]; then
  work=$(mktemp -d /tmp/bridge-wheel-XXXXXX)
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
case "$(realpath "$work")/" in
  "$checkout"/*) echo "wheel-check: $work is inside the checkout" >&2; exit 2 ;;
esac

step() { printf '\n+ %s\n' "$*"; }

step "build the wheel"
rm -rf "$work/dist"
.venv/bin/python -m pip wheel -q --no-deps --disable-pip-version-check . -w "$work/dist"
wheel=$(ls "$work"/dist/*.whl)
echo "$wheel"
rm -rf build  # setuptools' scratch, not ours to keep

step "install it into a fresh virtual environment"
rm -rf "$work/venv"
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --disable-pip-version-check "$wheel"

# From here on: an empty project directory, the venv's commands, no checkout anywhere.
project="$work/project"
rm -rf "$project" && mkdir -p "$project"
cd "$project"
unset PYTHONPATH VIRTUAL_ENV
export PATH="$work/venv/bin:/usr/local/bin:/usr/bin:/bin"
export BRIDGE_STATE_DIR="$work/state"

step "bridge comes from the wheel, not the checkout"
location=$(python -c 'import bridge; print(bridge.__file__)')
echo "$location"
case "$location" in
  "$work"/venv/*) ;;
  *) echo "wheel-check: bridge imported from $location, not the installed wheel" >&2; exit 1 ;;
esac

step "bridge --version"
bridge --version
step "bridge-mcp --version"
bridge-mcp --version
step "bridge-mcp --help"
bridge-mcp --help >/dev/null && echo "(help printed)"

step "bridge extension-path"
ext=$(bridge extension-path)
echo "$ext"
[ -f "$ext/manifest.json" ] || { echo "wheel-check: no manifest.json in $ext" >&2; exit 1; }
case "$ext" in
  "$work"/venv/*) ;;
  *) echo "wheel-check: the extension is not the installed one: $ext" >&2; exit 1 ;;
esac

step 'bridge ask --demo "What is a Python decorator?" --provider both'
started=$(date +%s.%N)
bridge ask --demo "What is a Python decorator?" --provider both | tee "$work/demo.txt"
echo "(demo took $(python -c "import time; print(f'{time.time() - $started:.1f}')") s)"
for provider in chatgpt gemini; do
  grep -q "^## $provider" "$work/demo.txt" || { echo "wheel-check: no $provider answer" >&2; exit 1; }
done
grep -qi "decorator" "$work/demo.txt" || { echo "wheel-check: the answers miss the question" >&2; exit 1; }
[ ! -e "$project/.local" ] || { echo "wheel-check: the demo left state in the project" >&2; exit 1; }

step "pytest --help in an empty project lists bridge's options"
pytest --help > "$work/pytest-help.txt"
for option in --live --bridge-reports --bridge-link --bridge-playwright; do
  grep -q -- "$option" "$work/pytest-help.txt" || {
    echo "wheel-check: pytest --help lacks $option" >&2; exit 1; }
done
grep -A3 "^bridge:" "$work/pytest-help.txt"

step "a scenario file in that project runs through the installed plugin"
mkdir -p scenarios
cat > scenarios/first.json <<'JSON'
{
  "version": "1.0.0",
  "description": "A first scenario in a project that only installed bridge.",
  "scenarios": [
    {
      "id": "both-decorator",
      "name": "Both providers explain decorators",
      "provider": "both",
      "tags": ["smoke"],
      "question": {"template": "What is a Python decorator?"},
      "assertions": {"minAnswerLength": 20}
    }
  ]
}
JSON
pytest -q -p no:cacheprovider
report=$(ls reports/*.json)
html="${report%.json}.html"
echo "$report"
[ -f "$html" ] || { echo "wheel-check: no HTML report beside $report" >&2; exit 1; }
echo "$html"

printf '\nwheel-check: all good (%s)\n' "$(basename "$wheel")"
