#!/bin/sh
# totsv: columns named field or field[i], -f picks and orders fields, -n, one header line always, batched streams, and
# misuse: an empty name in -f (",," or a comma at an end) is an error, never silently dropped.
. "$(dirname "$0")/../lib.sh"
FIX=$BIN/../tests/test_evalfix
[ -x "$FIX" ] || fail "$FIX is not built"
printf '1 2 3 7\n4 5 6 8\n' | "$FIX" table rows v:float32:1x2 w:float64 c:int32 >"$T/s" || fail "fixture"
totsv "$T/s" >"$T/out" || fail "totsv exited $?"
printf 'v[0]\tv[1]\tw\tc\n1\t2\t3\t7\n4\t5\t6\t8\n' | cmp -s - "$T/out" || fail "all fields: $(cat "$T/out")"
totsv -f c,v "$T/s" >"$T/out" || fail "-f c,v"
printf 'c\tv[0]\tv[1]\n7\t1\t2\n8\t4\t5\n' | cmp -s - "$T/out" || fail "-f c,v: $(cat "$T/out")"
totsv -f c,c -n 1 "$T/s" >"$T/out" || fail "-f c,c"
printf 'c\tc\n7\t7\n' | cmp -s - "$T/out" || fail "-f c,c -n 1: $(cat "$T/out")"
mkdigits -N 2 -s test-seen -n 100 --per-class 10 | batcher -n 2 -b 3 | totsv -f class1,match >"$T/out" || fail "batched"
[ "$(wc -l <"$T/out")" = 7 ] || fail "batched: one line per item: $(cat "$T/out")"
# --- misuse: exit 2, nothing on stdout
for list in ",," "c,,v" ",c" "c," ""; do
    expect_fail 2 "for help" totsv -f "$list" "$T/s"
done
grep -q "empty field name" "$T/err" || fail "empty name: $(cat "$T/err")"
expect_fail 2 "for help" totsv -f a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t,u,v,w,x,y "$T/s"
expect_fail 2 "for help" totsv -Z "$T/s"
expect_fail 2 "for help" totsv "$T/s" "$T/s"
expect_fail 1 "no field 'nope'" totsv -f c,nope "$T/s"
totsv -h | grep -q '^usage: totsv' || fail "-h"
# colour images [3, H, W] are images too: left out by default
[ "$(mkshapes -n 2 | totsv | head -n 1)" = "$(printf 'class\tid\torientation\thue\tleg[0]\tleg[1]\thue_noise')" ] ||
    fail "totsv prints colour images by default: $(mkshapes -n 2 | totsv | head -n 1 | cut -c1-100)"
pass
