#!/bin/sh
# Grids over several machines, for real (docs/grids.md): an OpenSSH
# server on 127.0.0.1 with throwaway keys stands for the remote machines, and a quick grid of
# hetriplet.sh (2 jobs, 20 steps, 12 images per class) runs through it
#   - with a shared directory: both jobs on the remote, results and checkpoints equal to a
#     local run's to the bit;
#   - with --transfer (nothing shared: the remote works in ~/.hedge-grid/OUT, the runs come
#     back) and a second machine that loses every job's connection (it dies mid-grid): the lost
#     job is retried on the good one, both jobs finish there, results equal to the bit;
#   - on a machine where nothing listens and the one that loses its jobs: exit 1, each run
#     named as failed, the job log saying how each job ended;
#   - evaluate.sh --shards on the remote (shared directory, --transfer): the numbers of a local
#     run without shards.
# Skipped (SKIP: why) where sshd cannot run: not root, no openssh-server and no way to install
# it, or a server that does not start.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
skip() { echo "SKIP: $*"; exit 0; }

[ "$(id -u)" = 0 ] || skip "not root (sshd runs as root)"
if [ ! -x /usr/sbin/sshd ] || ! command -v rsync > /dev/null 2>&1; then
    sh "$root/pipelines/setup-deps.sh" sshd > "$T/deps.log" 2>&1
fi
[ -x /usr/sbin/sshd ] || skip "no /usr/sbin/sshd and openssh-server could not be installed: $(tail -n 2 "$T/deps.log")"
command -v rsync > /dev/null 2>&1 || skip "no rsync and it could not be installed: $(tail -n 2 "$T/deps.log")"

# the server: throwaway keys, a config of its own, a free port; stopped whatever happens
T=$(cd "$T" && pwd -P)
ssh-keygen -q -N '' -t ed25519 -f "$T/host_key" || fail "ssh-keygen (host key)"
ssh-keygen -q -N '' -t ed25519 -f "$T/user_key" || fail "ssh-keygen (user key)"
cp "$T/user_key.pub" "$T/authorized_keys"
work=""
stop_sshd() {
    [ -s "$T/sshd.pid" ] && kill "$(cat "$T/sshd.pid")" 2> /dev/null
    [ -n "$work" ] && rm -rf "$work" && rmdir -p "$(dirname "$work")" 2> /dev/null
    rm -rf "$T"
}
trap stop_sshd EXIT
trap 'exit 1' INT TERM HUP
mkdir -p /run/sshd
port=""
for try in 1 2 3 4 5; do
    p=$(awk -v s="$$$try" 'BEGIN { srand(s); print 20000 + int(rand() * 40000) }')
    cat > "$T/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $p
HostKey $T/host_key
AuthorizedKeysFile $T/authorized_keys
StrictModes no
PidFile $T/sshd.pid
UsePAM no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
SetEnv SHLVL=1
EOF
    if /usr/sbin/sshd -f "$T/sshd_config" -E "$T/sshd.log"; then port=$p; break; fi
done
[ -n "$port" ] || skip "sshd does not start: $(tail -n 3 "$T/sshd.log" 2> /dev/null)"
opts="-F /dev/null -i $T/user_key -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
login="ssh -p $port $opts root@127.0.0.1"
i=0
until rhome=$($login 'cd && pwd -P' 2> "$T/ssh.err"); do
    i=$((i + 1))
    [ $i -lt 20 ] || skip "sshd started but takes no login: $(cat "$T/ssh.err") $(tail -n 3 "$T/sshd.log")"
    sleep 0.2
done
# a login prints nothing: GNU parallel reads the remote's output (its host probes too), so a
# line from the account's shell start-up breaks a grid at random. bash, run by sshd, reads
# ~/.bashrc only as a top-level shell (SHLVL < 2): the SetEnv above keeps an account's .bashrc
# (root's runs pyenv here, whose rehash races between concurrent logins and prints) out
said=$($login true 2>&1) || fail "ssh true failed: $said"
[ -z "$said" ] || fail "a login prints something, a grid would read it: $said"

# a machine that dies mid-grid: it takes logins, GNU parallel's probes and copies, and loses
# the connection of every job it is given (a job's command is hex-coded by parallel: decoded here)
cat > "$T/flaky-ssh" <<EOF
#!/bin/sh
if perl -e 'my (\$on, \$h) = (0, ""); for (@ARGV) { if (\$on) { \$h .= \$_ } elsif (/GNU_Parallel_worker/) { \$on = 1 } }
            exit(pack("H*", \$h) =~ /-run\.sh/ ? 0 : 1)' -- "\$@"; then
    echo lost >> "$T/flaky.log"; echo "flaky-ssh: connection lost" >&2; exit 255
fi
exec ssh "\$@"
EOF
chmod +x "$T/flaky-ssh"
flaky="$T/flaky-ssh -p $port $opts root@127.0.0.1"
dead_port=$((port + 1))
ssh -p "$dead_port" $opts root@127.0.0.1 true 2> /dev/null && dead_port=$((port + 2))
dead="ssh -p $dead_port $opts root@127.0.0.1"

export MKDIGITS_ARGS="--per-class 12"
grid() { BUILD=$(dirname "$BIN") sh "$root/pipelines/hetriplet.sh" demo -s 20 "$@"; }
runs="N2-D8-triplet N2-D8-hetriplet"
# same REF OUT: every run's results, checkpoint and an embedding stream are the same bytes
same() {
    for r in $runs; do
        for f in results.tsv model.ckpt emb-seen-noisy.hs; do
            cmp "$1/runs/$r/$f" "$2/runs/$r/$f" || fail "$2: $r/$f differs from the local run's"
        done
    done
}
# on HOST JOBLOG: both jobs are in the job log, finished (exit 0), on HOST
on() {
    awk -F'\t' -v h="$1" 'NR > 1 { n++; if ($2 != h || $7 != 0) bad++ } END { exit !(n == 2 && !bad) }' "$2" ||
        fail "the jobs did not all finish on $1: $(cat "$2")"
}

# a shared directory: the reference runs here in the same OUT (the checkpoints record their
# paths), then moves away, and the grid runs again on the remote
grid "$T/shared" > "$T/ref.md" 2> "$T/ref.err" || fail "the local run failed: $(tail -n 20 "$T/ref.err")"
mv "$T/shared" "$T/ref-shared"
grid --sshlogin "$login" "$T/shared" > "$T/shared.md" 2> "$T/shared.err" ||
    fail "the grid on a shared directory exited $?: $(tail -n 20 "$T/shared.err")"
on "$login" "$T/shared/joblog-hetriplet-demo"
same "$T/ref-shared" "$T/shared"
cmp "$T/ref.md" "$T/shared.md" || fail "the tables differ"

# --transfer: the remote works in ~/.hedge-grid/OUT, where the reference ran first (same
# recorded paths), moved away before; the grid's OUT is elsewhere, so nothing is shared
work=$rhome/.hedge-grid$T/xfer
[ -e "$work" ] && fail "$work exists before the test"
grid "$work" > /dev/null 2> "$T/ref.err" || fail "the local run in $work failed: $(tail -n 20 "$T/ref.err")"
mv "$work" "$T/ref-xfer"
rmdir -p "$(dirname "$work")" 2> /dev/null
grid -j 1 --transfer --sshlogin "$login" --sshlogin "$flaky" "$T/xfer" > "$T/xfer.md" 2> "$T/xfer.err" ||
    fail "the grid with --transfer exited $?: $(tail -n 20 "$T/xfer.err")"
on "$login" "$T/xfer/joblog-hetriplet-demo"
[ -s "$T/flaky.log" ] || fail "no job was sent to the machine that loses its jobs: $(cat "$T/xfer/joblog-hetriplet-demo")"
same "$T/ref-xfer" "$T/xfer"
cmp "$T/ref.md" "$T/xfer.md" || fail "the tables differ (--transfer)"
grep -q "checkpoint $work/runs/N2-D8-triplet/model.ckpt" "$T/xfer/runs/N2-D8-triplet/run.log" ||
    fail "the run did not train in the remote's work folder: $(cat "$T/xfer/runs/N2-D8-triplet/run.log")"
[ -e "$work" ] && fail "the remote work folder $work was left behind"
[ -e "$T/xfer/.hedge-grid" ] && fail "a local work folder was left in OUT"

# failure: a machine where nothing listens (left out at the start) and one that loses every
# job: the job log has both jobs failed (ssh's 255, after a retry), the runs are named, exit 1
rm -f "$T/flaky.log"
grid --sshlogin "$dead" --sshlogin "$flaky" "$T/fail" > "$T/fail.md" 2> "$T/fail.err"
rc=$?
[ "$rc" = 1 ] || fail "the failing grid exited $rc, expected 1: $(tail -n 20 "$T/fail.err")"
for r in $runs; do
    grep -q "failed run $r" "$T/fail.err" || fail "the failed run $r is not named: $(tail -n 20 "$T/fail.err")"
done
grep -q "finished: none" "$T/fail.err" || fail "what finished is not said: $(tail -n 20 "$T/fail.err")"
grep -q "Removed.*-p $dead_port " "$T/fail.err" || fail "the dead machine is not said to be left out: $(tail -n 20 "$T/fail.err")"
awk -F'\t' 'NR > 1 && $7 == 255 { n++ } END { exit n != 2 }' "$T/fail/joblog-hetriplet-demo" ||
    fail "the job log does not show both jobs failed: $(cat "$T/fail/joblog-hetriplet-demo")"
[ "$(wc -l < "$T/flaky.log")" = 4 ] || fail "each job was not tried twice (--retries 2): $(wc -l < "$T/flaky.log") tries"

# evaluate.sh --shards through the same server (issue 21 item 4): the shards (evaluate --shard
# I/3 of 300 queries) run on the remote, on a shared directory and with
# --transfer; the table and the JSON equal a local run's without shards
"$BIN/../tests/test_evalfix" emb -n 300 > "$T/e.hs" || fail "the embeddings fixture"
ev() { BUILD=$(dirname "$BIN") sh "$root/pipelines/evaluate.sh" "$@"; }
ev --json "$T/ev.json" "$T/e.hs" > "$T/ev.md" 2> "$T/ev.err" || fail "evaluate.sh: $(cat "$T/ev.err")"
for how in shared transfer; do
    x=""
    [ $how = transfer ] && x=--transfer
    ev --shards 3 -j 1 $x --sshlogin "$login" -o "$T/ev-$how" --json "$T/ev-$how.json" "$T/e.hs" > "$T/ev-$how.md" 2> "$T/ev-$how.err" ||
        fail "evaluate.sh --shards 3 ($how) exited $?: $(tail -n 5 "$T/ev-$how.err")"
    awk -F'\t' -v h="$login" 'NR > 1 { n++; if ($2 != h || $7 != 0) bad++ } END { exit !(n == 3 && !bad) }' "$T/ev-$how/joblog" ||
        fail "evaluate.sh --shards 3 ($how): the shards did not all run on $login: $(cat "$T/ev-$how/joblog")"
    grep -v 'error-versus-reject curve' "$T/ev-$how.md" | cmp -s - "$T/ev.md" ||
        fail "evaluate.sh --shards 3 ($how): another table: $(diff "$T/ev.md" "$T/ev-$how.md")"
    sed 's/, "reject_tsv": "[^"]*"//' "$T/ev-$how.json" | cmp -s - "$T/ev.json" ||
        fail "evaluate.sh --shards 3 ($how): another JSON: $(cat "$T/ev-$how.json")"
done
[ -e "$rhome/.hedge-grid$T/ev-transfer" ] && fail "evaluate.sh --transfer left its work folder on the remote"
pass
