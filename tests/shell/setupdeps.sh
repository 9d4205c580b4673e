#!/bin/sh
# setup-deps.sh installs as a new machine's owner would want: apt-get install
# --no-install-recommends (only what the packages depend on), no service started while it runs
# (a policy-rc.d of its own, removed after; another's left alone), and the system's services as
# they were: what the install enabled at boot (here openssh-server's ssh.service, its alias
# sshd.service and its System V S link) disabled again, with systemctl where there is one and
# without (no systemd: the links removed, update-rc.d NAME disable), what was enabled before
# (cron) kept; also when apt-get fails. Not root: the command to run, with the option.
# apt-get, dpkg-query, id, systemctl and update-rc.d are fakes on PATH acting on a folder that
# stands for / (SETUP_DEPS_ROOT); the real ones are never called.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
R=$T/root F=$T/fake
export SETUP_DEPS_ROOT=$R FAKE_STATE=$T
mkdir -p "$F"
cat > "$F/id" <<'EOF'
#!/bin/sh
echo "${FAKE_UID:-0}"
EOF
# dpkg-query -W -f=... PKG: "installed ARCH" for the packages listed in $FAKE_STATE/installed, as
# on a machine with a second architecture (a line for each: arm64's not installed), and only
# "installed arm64" for those in $FAKE_STATE/foreign (installed for the other architecture alone:
# missing here)
cat > "$F/dpkg-query" <<'EOF'
#!/bin/sh
for p; do :; done
grep -qx "$p" "$FAKE_STATE/installed" && printf 'installed %s\nnot-installed arm64\n' "$(dpkg --print-architecture)"
grep -qx "$p" "$FAKE_STATE/foreign" 2>/dev/null && printf 'installed arm64\n'
exit 0
EOF
# apt-get: logs its arguments and what policy-rc.d answers while it installs; "installs" its
# packages and does what openssh-server's postinst does: enables ssh.service (a wants link, the
# alias sshd.service) and the System V script (S01ssh), and enables cron again (enabled already)
cat > "$F/apt-get" <<'EOF'
#!/bin/sh
echo "apt-get $*" >> "$FAKE_STATE/apt.log"
[ "$1" = update ] && exit 0
r=$SETUP_DEPS_ROOT
if [ -x "$r/usr/sbin/policy-rc.d" ]; then
    "$r/usr/sbin/policy-rc.d" ssh start
    echo "policy $?" >> "$FAKE_STATE/apt.log"
else
    echo "no policy" >> "$FAKE_STATE/apt.log"
fi
for p; do case $p in -*) ;; *) echo "$p" >> "$FAKE_STATE/installed" ;; esac; done
ln -sf /lib/systemd/system/ssh.service "$r/etc/systemd/system/multi-user.target.wants/ssh.service"
ln -sf /lib/systemd/system/ssh.service "$r/etc/systemd/system/sshd.service"
ln -sf ../init.d/ssh "$r/etc/rc2.d/S01ssh"
ln -sf /lib/systemd/system/cron.service "$r/etc/systemd/system/multi-user.target.wants/cron.service"
exit "${FAKE_APT_RC:-0}"
EOF
# systemctl --quiet disable UNIT: removes UNIT's links and, as systemd-sysv-install does, turns
# its S links into K links
cat > "$F/systemctl" <<'EOF'
#!/bin/sh
echo "systemctl $*" >> "$FAKE_STATE/apt.log"
[ "$1 $2" = "--quiet disable" ] || exit 1
r=$SETUP_DEPS_ROOT u=$3
for l in "$r"/etc/systemd/system/* "$r"/etc/systemd/system/*/*; do
    [ -L "$l" ] && [ "$(basename "$(readlink "$l")")" = "$u" ] && rm "$l"
done
for l in "$r"/etc/rc?.d/S??"${u%.service}"; do
    [ -L "$l" ] && mv "$l" "$(dirname "$l")/K01${u%.service}"
done
exit 0
EOF
cat > "$F/update-rc.d" <<'EOF'
#!/bin/sh
echo "update-rc.d $*" >> "$FAKE_STATE/apt.log"
[ "$2" = disable ] || exit 1
for l in "$SETUP_DEPS_ROOT"/etc/rc?.d/S??"$1"; do
    [ -L "$l" ] && mv "$l" "$(dirname "$l")/K01$1"
done
exit 0
EOF
chmod +x "$F"/*
# the tools the script and the fakes use, without systemctl (a machine without systemd)
mkdir -p "$T/tools"
for t in sh awk sed sort comm tr mktemp rm chmod readlink ls cat grep ln mkdir mv basename dirname dpkg; do
    ln -s "$(command -v "$t")" "$T/tools/$t" || fail "no $t"
done
mkdir -p "$T/nosystemd" && for f in "$F"/*; do [ "${f##*/}" = systemctl ] || ln -s "$f" "$T/nosystemd/"; done

# fresh: a system with cron enabled (systemd and System V), every package but two installed
fresh() {
    rm -rf "$R" "$T/apt.log"
    mkdir -p "$R/usr/sbin" "$R/etc/systemd/system/multi-user.target.wants" "$R/etc/rc2.d"
    ln -s /lib/systemd/system/cron.service "$R/etc/systemd/system/multi-user.target.wants/cron.service"
    ln -s ../init.d/cron "$R/etc/rc2.d/S01cron"
    printf '%s\n' libopenblas-dev zlib1g-dev libpng-dev pkgconf python3-msgpack python3-numpy \
        dataset-fashion-mnist > "$T/installed"
    links > "$T/links.before"
}
# links: every link of the system's service folders, with its target
links() { (cd "$R/etc" && find . -type l -exec sh -c 'printf "%s -> %s\n" "$1" "$(readlink "$1")"' _ {} \; | sort); }
# as_before WHAT: the services are what they were, but for K links of what the install added
as_before() {
    links | grep -v '/K01ssh ->' > "$T/links.after"
    cmp -s "$T/links.before" "$T/links.after" || fail "$1: the services differ from before:
$(diff "$T/links.before" "$T/links.after")"
    [ -e "$R/usr/sbin/policy-rc.d" ] && fail "$1: policy-rc.d left behind"
    return 0
}

# with systemctl
fresh
PATH="$F:$PATH" sh "$root/pipelines/setup-deps.sh" tests > "$T/o" 2> "$T/e" || fail "setup-deps.sh tests: exit $? ($(cat "$T/e"))"
[ -s "$T/o" ] && fail "setup-deps.sh wrote on stdout"
grep -q "^apt-get install -y -qq --no-install-recommends libmsgpack-dev .*openssh-server" "$T/apt.log" ||
    fail "apt-get was not asked for the packages alone: $(cat "$T/apt.log")"
grep -qx "policy 101" "$T/apt.log" || fail "services could start while apt-get ran: $(cat "$T/apt.log")"
grep -qx "systemctl --quiet disable ssh.service" "$T/apt.log" || fail "ssh.service was not disabled: $(cat "$T/apt.log")"
grep -q "systemctl --quiet disable cron" "$T/apt.log" && fail "cron, enabled before, was disabled"
grep -q "the install enabled ssh.service at boot; disabled it again (systemctl disable ssh.service)" "$T/e" ||
    fail "what was disabled is not said: $(cat "$T/e")"
[ -L "$R/etc/rc2.d/K01ssh" ] || fail "the System V link is not turned off"
as_before "with systemctl"

# a package installed for the other architecture alone (libopenblas-dev:arm64 for a cross-build)
# is missing for this one: asked for
fresh
grep -vx libopenblas-dev "$T/installed" > "$T/i" && mv "$T/i" "$T/installed" && echo libopenblas-dev > "$T/foreign"
PATH="$F:$PATH" sh "$root/pipelines/setup-deps.sh" > "$T/o" 2> "$T/e" || fail "setup-deps.sh, openblas for arm64 only: exit $?"
grep -q "^apt-get install .*libopenblas-dev" "$T/apt.log" || fail "libopenblas-dev, installed for arm64 alone, was not asked for: $(cat "$T/apt.log")"
rm "$T/foreign"

# without systemctl (no systemd installed): the new links removed, update-rc.d for the S link
fresh
PATH="$T/nosystemd:$T/tools" sh "$root/pipelines/setup-deps.sh" tests > "$T/o" 2> "$T/e" ||
    fail "setup-deps.sh tests without systemctl: exit $? ($(cat "$T/e"))"
grep -q -- "--no-install-recommends" "$T/apt.log" || fail "without systemctl: no --no-install-recommends"
grep -qx "update-rc.d ssh disable" "$T/apt.log" || fail "without systemctl: S01ssh not disabled: $(cat "$T/apt.log")"
grep -q "removed the link /etc/systemd/system/sshd.service again" "$T/e" || fail "without systemctl: not said: $(cat "$T/e")"
as_before "without systemctl"

# another's policy-rc.d: used and left as it was
fresh
printf '#!/bin/sh\n# the admin'"'"'s\nexit 0\n' > "$R/usr/sbin/policy-rc.d" && chmod 755 "$R/usr/sbin/policy-rc.d"
cp "$R/usr/sbin/policy-rc.d" "$T/policy.orig"
PATH="$F:$PATH" sh "$root/pipelines/setup-deps.sh" tests > "$T/o" 2> "$T/e" || fail "with a policy-rc.d: exit $?"
grep -qx "policy 0" "$T/apt.log" || fail "the admin's policy-rc.d was replaced during the install"
cmp -s "$R/usr/sbin/policy-rc.d" "$T/policy.orig" || fail "the admin's policy-rc.d was changed or removed"
rm "$R/usr/sbin/policy-rc.d"
as_before "with another's policy-rc.d"

# apt-get fails after the postinst enabled ssh: exit 1, the services as they were all the same
fresh
FAKE_APT_RC=100 PATH="$F:$PATH" sh "$root/pipelines/setup-deps.sh" tests > "$T/o" 2> "$T/e"
[ $? = 1 ] || fail "a failed apt-get did not fail setup-deps.sh"
grep -q "apt-get install --no-install-recommends libmsgpack-dev .* failed" "$T/e" || fail "the failure is not said: $(cat "$T/e")"
as_before "after a failed install"

# not root: the exact command, nothing installed
fresh
FAKE_UID=1000 PATH="$F:$PATH" sh "$root/pipelines/setup-deps.sh" > "$T/o" 2> "$T/e"
[ $? = 1 ] || fail "not root with packages missing did not fail"
grep -q "^  apt-get install --no-install-recommends libmsgpack-dev$" "$T/e" || fail "not root: no command to run: $(cat "$T/e")"
[ -e "$T/apt.log" ] && fail "not root: apt-get ran"
pass
