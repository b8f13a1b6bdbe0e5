#!/usr/bin/env bash
# The GPU figures the README quotes, in one run on a machine with a Vulkan GPU (issues #35, #36):
# the default Simulate and a 4096² stream-power step with its per-kernel profile, the pipe
# model's kernels against a buffer copy, a 4097² and a 16385² refine build with the passes on the
# GPU and on the CPU, the 16385² all-maps Unity tile set on every core, and the editor off screen
# (frame times at 2049² and 4097², the 1/8/32 km worlds with the aerial-perspective volume and
# raymarched). Built elsewhere, run there:
#
#   cargo build --release --bin talus
#   cargo bench --no-run --no-default-features --features gpu --bench gpu_stream_power --bench gpu_pipe
#   benches/gpu_figures.sh OUT TALUS GPU_STREAM_POWER GPU_PIPE [PEAK_GBS] [BUDGET_S]
#
# TALUS is the editor build (default features: one binary for the CLI and the window); the bench
# binaries are the `target/release/deps/gpu_*` files cargo prints. PEAK_GBS is the card's DRAM
# bandwidth (3350 for an H100 SXM, 4800 for an H200). The editor needs an X display: DISPLAY, or
# Xvfb on the PATH (a GPU machine without X can take Xvfb, xkbcomp, the xkb data and their
# libraries from a Debian one, on LD_LIBRARY_PATH; the editor then loads libX11 and xkbcommon
# too). Each part runs under a share of BUDGET_S (default 560 s) and is skipped when too little is
# left, most important first; everything goes to OUT/log.txt, screenshots to OUT.
set -u
out=${1:?OUT}; talus=$(realpath "${2:?TALUS}"); sp=$(realpath "${3:?GPU_STREAM_POWER}"); pipe=$(realpath "${4:?GPU_PIPE}")
peak=${5:-3350}; budget=${6:-560}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"; out=$(realpath "$out"); log=$out/log.txt; work=$(mktemp -d)
t0=$(date +%s)
left() { echo $((budget - ($(date +%s) - t0))); }
part() { # part CAP NAME CMD...: runs CMD for at most min(CAP, time left) seconds
  local cap=$1 name=$2 l; shift 2; l=$(left)
  if [ "$l" -lt 15 ]; then echo "== $name: skipped (time)" >>"$log"; return; fi
  [ "$cap" -gt "$l" ] && cap=$l
  local s=$(date +%s.%N); echo "== $name (at most $cap s)" >>"$log"
  (cd "$work" && timeout -k 5 "$cap" "$@") >>"$log" 2>&1
  echo "   exit $?, $(awk "BEGIN{print $(date +%s.%N) - $s}") s" >>"$log"
}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>/dev/null; nproc; } >"$log"
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$work}
part 60 "default Simulate and a 4096² step, GPU" "$sp" --sizes 1025,2049,4097 --step-size 4096 --no-cpu
part 90 "the same on the CPU (1025², 2049², the 4096² step)" "$sp" --sizes 1025,2049 --step-size 4096
"$talus" demo --project "$work/p8.talus" --size 513 --cell-size 8 --layers stream-power >>"$log" 2>&1
for b in gpu cpu; do
  part 60 "4097² refine build, passes on the $b" /usr/bin/time -f "%e s, %M KiB" "$talus" build p8.talus --size 4097 --out b.bhef --backend $b
done
part 170 "16385² refine build, passes on the GPU" /usr/bin/time -f "%e s, %M KiB" "$talus" build p8.talus --size 16385 --out b.bhef --backend gpu
rm -f "$work/b.bhef"
part 120 "16385² Unity tile set, all maps" /usr/bin/time -f "%e s, %M KiB" "$talus" build p8.talus --engine unity --size 16385 --tiles 8x8 --maps all --erosion upsample --out tiles
rm -rf "$work"/tiles*
part 60 "pipe model's kernels at 4096²" "$pipe" --sizes 4096 --peak-gbs "$peak" --no-cpu --seconds 1 --kernels 4096
if [ -z "${DISPLAY:-}" ] && command -v Xvfb >/dev/null; then
  Xvfb :93 -screen 0 1400x800x24 -nolisten tcp >/dev/null 2>&1 & xvfb=$!; export DISPLAY=:93; sleep 2
fi
mkdir -p "$work/screenshots"
# Off screen: the frames are the GPU's, not paced by a display; 200 frames let the pipelines compile.
sed 's/WaitFrames(12)/WaitFrames(200)/' "$root/assets/scripts/shot_worlds.ron" >"$work/worlds.ron"
# The same worlds with the atmosphere raymarched per pixel (no aerial-perspective volume): the
# reference the volume's haze is judged against.
sed -e '0,/^\[/s//[ Look((sky: (atmosphere: (raymarched: true)))),/' -e 's/world-/raymarched-world-/' \
  "$work/worlds.ron" >"$work/worlds_raymarched.ron"
for s in "$root/assets/scripts/frame_times_2049.ron" "$work/worlds.ron" "$work/worlds_raymarched.ron" \
  "$root/assets/scripts/frame_times_4097.ron"; do
  part 120 "editor: $(basename "$s")" env TALUS_OFFSCREEN=1 "$talus" --script "$s"
done
for j in "$work"/frame_times_*.json; do [ -e "$j" ] && { echo "== $(basename "$j")"; cat "$j"; echo; } >>"$log"; done
for f in "$work"/screenshots/*world-*.png; do [ -e "$f" ] && cp "$f" "$out/gpu-$(basename "$f")"; done
[ -n "${xvfb:-}" ] && kill "$xvfb"
echo "total $(($(date +%s) - t0)) s" >>"$log"
rm -rf "$work"
