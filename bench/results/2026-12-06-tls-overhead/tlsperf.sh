#!/bin/bash
# perf of saturn-echo --tls under tls-load handshake_full_ecdsa / handshake_resumed_ecdsa: shares by symbol class
SC=${1:-handshake_full_ecdsa}
cd /tmp
/work/main/build/release/bin/saturn-echo --tls --tls-cert /tmp/bk.crt --tls-key /tmp/bk.key --port 18500 --threads 2 > /tmp/echo-tls.log 2>&1 &
SP=$!
sleep 0.7
/work/main/build/peers/bin/tls-load --port 18500 --scenario $SC --threads 2 --duration 1 --warmup 1 --samples 1 --runtime saturn --server-pid $SP > /dev/null
perf record -F 2999 -g -o /tmp/tlsperf.data -p $SP -- sleep 4 > /dev/null 2>&1 &
PP=$!
/work/main/build/peers/bin/tls-load --port 18500 --scenario $SC --threads 2 --duration 4 --warmup 0.2 --samples 1 --runtime saturn --server-pid $SP
wait $PP
kill $SP; wait $SP 2>/dev/null
perf report -i /tmp/tlsperf.data --no-children --sort sym 2>/dev/null | grep -E "^ +[0-9]" > /tmp/tlsperf.txt
python3 - <<'PY'
import re,collections
c=collections.Counter()
for line in open('/tmp/tlsperf.txt'):
    m=re.match(r'\s+([0-9.]+)%\s+\[(.)\]\s+(.*)',line)
    if not m: continue
    pct,kind,sym=float(m.group(1)),m.group(2),m.group(3).strip()
    if kind=='k': cls='kernel'
    elif re.match(r'(saturn::|std::|void saturn|bool saturn|int saturn|\(anonymous|main$|operator|_GLOBAL|__gnu_cxx|void std|bool std)',sym) or 'saturn' in sym: cls='saturn (and its C++ runtime)'
    elif re.match(r'(__memmove|__memset|__memcpy|__memcmp|__strlen|malloc|_int_|free|cfree|__libc|__send|__recv|syscall|__GI|unlink_chunk|__strcmp|__strchr|__memchr|clock_gettime|__lll|pthread|__pthread|_dl|__tls|__errno|sysmalloc|getrusage|__getrusage|__vdso)',sym): cls='libc'
    else: cls='OpenSSL (libcrypto/libssl)'
    c[cls]+=pct
tot=sum(c.values())
for k,v in c.most_common(): print(f"{k:32} {v:6.2f}%  ({100*v/tot:.1f}% of samples)")
PY
grep -v "^\s*[0-9.]*%\s*\[k\]" /tmp/tlsperf.txt | head -40 > /tmp/tlsperf-user.txt
