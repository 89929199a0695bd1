#!/usr/bin/env bash
# Interleaved A/B of saturn-echo: rounds alternate A,B / B,A; many-small and single profiles.
cd /tmp/ab-echo
out=/tmp/ab-echo/results.jsonl; : > $out
for r in 1 2 3 4 5 6; do
  if [ $((r % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for v in $order; do
    THREADS=2 DURATION=3 WARMUP=1 QUIET_WAIT=0 RUNTIME=$v ECHO_LOAD=/tmp/ref-net/bin/echo-load \
      /tmp/ref-net/bin/run-echo.sh "/tmp/ab-echo/$v" many-small single 2>>/tmp/ab-echo/stderr.log \
      | sed "s/^{/{\"round\":$r,\"rev\":\"$v\",/" >> $out
  done
done
echo done
