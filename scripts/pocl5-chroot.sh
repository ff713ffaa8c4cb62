#!/usr/bin/env bash
# An Ubuntu 24.04 (noble) chroot with noble's PoCL 5, so that kernels can be checked on the PoCL the
# H200 image has (5.0) from this Debian 12 machine (PoCL 3.1): PoCL 5's kernel compiler rejects
# constructs that 3.1 accepts (see tasks/lj/best.cl). The kevo built in a worktree runs inside it
# against noble's libraries, with /work, /tmp, /proc, /sys and /dev bound in.
# Usage: scripts/pocl5-chroot.sh setup          (idempotent; needs root and the Ubuntu archive)
#        scripts/pocl5-chroot.sh run CMD [ARG...] (runs CMD inside, in the current directory)
#        scripts/pocl5-chroot.sh check           (exits 0 when set up)
#        scripts/pocl5-chroot.sh check-kernels   (every tasks/*/best.cl and seed.cl, at every PATH
#                                                 value, checked at the small profile; exits 1 unless all ok)
# e.g.   scripts/pocl5-chroot.sh run build/kevo eval lj tasks/lj/best.cl --backend opencl --check-only
# The chroot lives outside the repository, at $POCL5_ROOT (default /work/noble). The mounts of `run`
# are made in a private mount namespace, so they vanish when CMD exits (also when it is killed)
# and concurrent runs do not disturb each other.
set -euo pipefail

ROOT="${POCL5_ROOT:-/work/noble}"
MIRROR="${POCL5_MIRROR:-http://archive.ubuntu.com/ubuntu}"
# Sonames kevo links that noble lacks (Debian 12's libraries of those versions) are copied here.
HOST_LIBS=/opt/kevo-host-libs
# What kevo needs at run time, by noble package; the rest of its sonames are noble's base system.
PACKAGES=(pocl-opencl-icd ocl-icd-libopencl1 clinfo libfmt9 libsqlite3-0 libcurl4t64 libstdc++6)

die() { echo "pocl5-chroot: $*" >&2; exit 1; }

is_set_up() { [ -x "$ROOT/usr/bin/clinfo" ] && [ -e "$ROOT/etc/OpenCL/vendors/pocl.icd" ]; }

bootstrap() {
  [ -x "$ROOT/usr/bin/apt-get" ] && return 0
  command -v debootstrap >/dev/null || die "debootstrap is missing (apt-get install -y debootstrap)"
  local script=/usr/share/debootstrap/scripts/noble
  [ -e "$script" ] || script=/usr/share/debootstrap/scripts/gutsy
  # Debian carries no Ubuntu archive key, hence --no-check-gpg: a scratch chroot for tests only.
  debootstrap --variant=minbase --no-check-gpg --components=main,universe \
    --include=ubuntu-keyring noble "$ROOT" "$MIRROR" "$script"
}

configure_apt() {
  local suites="noble noble-updates noble-security"
  : > "$ROOT/etc/apt/sources.list"
  for s in $suites; do echo "deb $MIRROR $s main universe" >> "$ROOT/etc/apt/sources.list"; done
  cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
}

install_packages() {
  in_chroot env DEBIAN_FRONTEND=noninteractive apt-get update -q
  in_chroot env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${PACKAGES[@]}"
}

# Copies each library the host's kevo resolves but the chroot cannot into $HOST_LIBS.
copy_missing_libs() {
  local kevo="$1" missing
  [ -x "$kevo" ] || return 0
  mkdir -p "$ROOT$HOST_LIBS"
  missing=$(in_chroot env LD_LIBRARY_PATH="$HOST_LIBS" ldd "$kevo" | awk '/not found/ {print $1}')
  for so in $missing; do
    local path
    path=$(ldd "$kevo" | awk -v so="$so" '$1 == so {print $3}')
    [ -n "$path" ] || die "$so: not found on the host either"
    cp -L "$path" "$ROOT$HOST_LIBS/$so"
    echo "copied $path into the chroot ($HOST_LIBS)"
  done
}

check_pocl_version() {
  local version
  version=$(in_chroot clinfo | awk '/Platform Version/ && !v {sub(/.*Platform Version +/, ""); v = $0} END {print v}')
  echo "chroot OpenCL platform: $version"
  [[ "$version" == *PoCL\ 5* ]] || die "expected PoCL 5, got '$version'"
}

# Runs "$@" inside the chroot with the binds, in the caller's directory when it is under /work
# (EXEC=exec: in place of this script).
in_chroot() {
  local dir=/
  [[ "$PWD" == /work* ]] && dir="$PWD"
  ${EXEC:-} unshare --mount --propagation private -- bash -c '
    set -e; root="$1"; dir="$2"; shift 2
    for d in proc sys dev tmp work; do mkdir -p "$root/$d"; done
    mount -t proc proc "$root/proc"
    mount --rbind /sys "$root/sys"   # hwloc (PoCL) reads the CPU topology and memory there
    mount --rbind /dev "$root/dev"
    mount --bind /tmp "$root/tmp"
    mount --bind /work "$root/work"
    exec chroot "$root" /usr/bin/env -C "$dir" "$@"' _ "$ROOT" "$dir" \
    env LD_LIBRARY_PATH="$HOST_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"
}

# Checks every best.cl and seed.cl (each PATH value where the file tunes PATH) with build/kevo inside.
check_kernels() {
  cd "$(dirname "$0")/.."
  local failed=0 f task paths p verdict
  for f in tasks/*/best.cl tasks/*/seed.cl; do
    task=$(basename "$(dirname "$f")")
    paths=$(sed -n 's|^// kevo: tune PATH ||p' "$f" | head -1)
    for p in ${paths:--}; do
      local define=()
      [ "$p" = - ] || define=(-D "PATH=$p")
      # A generous deadline: the GPU paths are slow on a CPU device, the more so on a busy machine.
      verdict=$(in_chroot build/kevo eval "$task" "$f" --backend opencl --profile small --sizes all \
        --check-only --timeout 600 "${define[@]}" 2>&1 | sed -n 's/^verdict: //p' || true)
      echo "$f${paths:+ PATH=$p}: ${verdict:-no verdict}"
      [ "$verdict" = ok ] || failed=1
    done
  done
  return $failed
}

case "${1:-}" in
  setup)
    [ "$(id -u)" -eq 0 ] || die "setup needs root"
    bootstrap
    configure_apt
    is_set_up || install_packages
    copy_missing_libs "$(realpath -m "$(dirname "$0")/../build/kevo")"
    check_pocl_version
    ;;
  run)
    shift
    [ $# -gt 0 ] || die "run needs a command"
    is_set_up || die "$ROOT is not set up (scripts/pocl5-chroot.sh setup)"
    EXEC=exec in_chroot "$@"  # this script becomes CMD: its exit status, no shell report of a crash
    ;;
  check) is_set_up ;;
  check-kernels)
    is_set_up || die "$ROOT is not set up (scripts/pocl5-chroot.sh setup)"
    check_kernels
    ;;
  *) die "usage: $0 setup | run CMD [ARG...] | check | check-kernels" ;;
esac
