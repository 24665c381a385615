# Shared by the Garage benchmarks (sourced): their arguments (--rounds N, --profile
# release|ci), the build of webaip and of the benchmark's own client (the bench target named
# first), the 3-node cluster of scripts/garage-cluster.sh (WEBAIP_GARAGE_DIR /
# WEBAIP_GARAGE_PORT choose it), run-store.sh's package (two 90 MB ARCs and 240 small ones), a
# scratch folder, a store configuration per run and a timer. Sets profile, rounds, bin,
# client_bin, pkg, files, bytes, work and eps.
#
#   source bench/garage-common.sh BENCH_TARGET "$@"
client=$1
shift
profile=release rounds=3
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
features=()
[ "$profile" = ci ] && features=(--features test-hooks) # shares the tests' build
cargo build --quiet --profile "$profile" "${features[@]}" --bin webaip
cargo build --quiet --profile "$profile" "${features[@]}" --bench "$client"
bin=target/$profile/webaip
client_bin=$(ls -t target/"$profile"/deps/"$client"-* | grep -v '\.d$' | head -1)
set -a
eval "$(bash scripts/garage-cluster.sh start 2>/dev/null)"
set +a

pkg=$(bash bench/store-package.sh "$bin")
files=$(find "$pkg" -type f | wc -l)
bytes=$(du -sb "$pkg" | cut -f1)
echo "package: $files files, $((bytes / 1000000)) MB"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
eps=$(echo "$S3_ENDPOINTS" | sed 's/\([^,]*\)/"\1"/g; s/,/, /g')

# A store of one bucket replica under PREFIX in LAYOUT; prints its configuration's path.
store_toml() { # DIR LAYOUT PREFIX
  mkdir -p "$1"
  cat >"$1/store.toml" <<TOML
state = "state.sqlite"
[user]
name = "bench"
address = "mailto:bench@example.org"
[[replica]]
name = "garage"
type = "s3"
layout = "$2"
endpoints = [$eps]
bucket = "$S3_BUCKET"
region = "garage"
prefix = "$3"
TOML
  echo "$1/store.toml"
}

# Milliseconds the command takes, its output dropped.
ms_of() { local s; s=$(date +%s%N); "$@" >/dev/null; echo $(( ($(date +%s%N) - s) / 1000000 )); }
