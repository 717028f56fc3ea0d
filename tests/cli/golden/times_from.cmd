# Numbers that say where they come from: the graph's "device" names where its op times
# were measured; on the profile's device compile and simulate use them ("a100-pcie4
# (measured)"), elsewhere the device time model ("h200-pcie5 (modelled: roofline)"), and
# say so ("times_from"); a prediction that overflows is an error, not "inf"; a bare
# duration is seconds; a time limit of 0 is refused by a config and by sfc pack alike.
sed 's/"name": "tiny-mlp-b4",/"name": "tiny-mlp-b4", "device": "cpu",/' "$DATA/graphs/tiny_mlp.json" > cpu.json
sed 's/"device": "cpu"/"device": "a100-pcie4"/' cpu.json > a100.json
sed 's/"device": "cpu"/"device": "cuda:NVIDIA A100-PCIE-40GB"/' cpu.json > a100-cuda.json
sed 's/"time_us": [0-9.]*/"time_us": 1e308/' a100.json > huge.json
sed '0,/"time_us": [0-9.]*, *"flops"/s//"flops"/' a100.json > partial.json
# compile: every case of times_from
for g in cpu.json a100.json a100-cuda.json partial.json "$DATA/graphs/tiny_mlp.json" "$DATA/graphs/minimal.json"; do
  $SFC compile "$g" --profile a100-pcie4 --json | python3 -c "import json, sys; print(json.load(sys.stdin)['times_from'])"
done
$SFC compile cpu.json -o cpu.plan | grep "op times"
$SFC compile a100.json --profile a100-pcie4 -o a100.plan | grep "op times"
$SFC compile a100.json | grep "op times"
# simulate: the plan keeps the device; the profile compared is --profile's, else the plan's
$SFC simulate cpu.plan | grep "op times"
$SFC simulate cpu.plan --profile a100-pcie4 | grep "op times"
$SFC simulate cpu.plan --json | python3 -c "import json, sys; print(json.load(sys.stdin)['times_from'])"
$SFC simulate a100.plan | grep "op times"
$SFC simulate a100.plan --profile v100-nvlink2 | grep "op times"
# op times of 1e308 us, measured on the profile's device, compile, but their sum
# overflows: one error line, exit 2
$SFC compile huge.json --profile a100-pcie4 -o huge.plan -q; echo "compile exit $?"
$SFC simulate huge.plan 2>&1; echo "exit $?"
$SFC simulate huge.plan --json 2>&1; echo "exit $?"
$SFC run huge.plan --device sim 2>&1; echo "exit $?"
# nor a trace with inf in it: nothing is written
$SFC simulate huge.plan --trace huge-trace.json 2>&1; echo "exit $?"; test -e huge-trace.json || echo "no trace"
# durations: a plain number is seconds; 0 is refused by the config and by sfc pack alike
printf 'packer:\n  time_limit: 60\ndevice:\n  copy_latency: 0.000015\n' > sec.yaml
$SFC config --print -c sec.yaml | grep -E "time_limit|copy_latency"
printf 'packer:\n  time_limit: 0\n' > zero.yaml
$SFC config --print -c zero.yaml 2>&1; echo "exit $?"
$SFC pack "$DATA/pack/leading_gap.csv" -a best-fit --time-limit 60 | grep peak/lower; echo "exit $?"
$SFC pack "$DATA/pack/leading_gap.csv" --time-limit 0 2>&1; echo "exit $?"
