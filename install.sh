#!/bin/sh
# Installs the `service` binary (a self-hosted deploy webhook) on Linux x86_64 or aarch64.
#
#   sh -c "$(curl -fsSL <base-url>/install.sh || echo exit 1)" install.sh --base-url <base-url>
#   sh -c "$(curl -fsSL <base-url>/install.sh || echo exit 1)" install.sh --base-url <base-url> --version 0.1.0
#
# A failed download runs nothing and exits non-zero (`|| echo exit 1`); a curl piped into sh would exit 0 with
# nothing installed.
#
# It downloads <base-url>/<latest | vX.Y.Z>/<asset> and SHA256SUMS from the same directory, checks the
# SHA-256, and moves the binary into place atomically. It never edits shell rc files, and it never hides or
# replaces another program called `service` (Debian's /usr/sbin/service starts system services) unless told
# to with --allow-shadow. Run with --help.
#
# POSIX sh. Everything happens in functions, and the only top-level command is on the last line, so a
# download cut off part-way runs nothing.

# The release download location. Release tooling sets this; until then pass --base-url or SERVICE_BASE_URL.
DEFAULT_BASE_URL="https://releases.service.invalid"

_svc_usage() {
  cat <<'EOF'
Install the `service` binary (Linux x86_64 / aarch64).

USAGE
  sh -c "$(curl -fsSL <base-url>/install.sh || echo exit 1)" install.sh --base-url <base-url> [options]
  sh install.sh [options]

OPTIONS
  --version X     install version X (1.2.3 or v1.2.3); default: latest       env SERVICE_VERSION
  --dir DIR       install as DIR/service; default: ~/.local/bin,
                  or /usr/local/bin when run as root                          env SERVICE_INSTALL_DIR
                  (when another `service` command is on PATH, such as
                  /usr/sbin/service, the default is a dir off PATH instead:
                  ~/.local/share/service/bin, or /opt/service/bin for root)
  --allow-shadow  install in DIR even where DIR/service hides or replaces
                  another `service` command
  --base-url URL  download from URL/latest/... or URL/vX.Y.Z/...
                  (a mirror, or a local server)                               env SERVICE_BASE_URL
  --dry-run       print the platform, URLs and target path; download nothing
  -h, --help      show this help

Flags win over environment variables. The binary is checked against the release's SHA256SUMS before it
is installed; shell rc files are never edited (a PATH hint is printed instead). Another program called
`service` keeps working: without --allow-shadow, a DIR where DIR/service would come first on PATH ahead of
it, or where a different program is DIR/service, is refused.
EOF
}

_svc_say() {
  printf '%s\n' "$*"
}

_svc_err() {
  printf 'install.sh: error: %s\n' "$*" >&2
  exit 1
}

_svc_usage_err() {
  printf 'install.sh: %s\n\n' "$*" >&2
  _svc_usage >&2
  exit 2
}

# Removes the temp dir and a half-written binary; runs on every exit, failures included.
_svc_cleanup() {
  if [ -n "${_svc_stage:-}" ]; then rm -f "$_svc_stage"; fi
  if [ -n "${_svc_tmp:-}" ]; then rm -rf "$_svc_tmp"; fi
}

# _svc_fetch URL FILE
_svc_fetch() {
  case $_svc_downloader in
    curl) curl -fsSL -o "$2" "$1" </dev/null ;;
    wget) wget -q -O "$2" "$1" </dev/null ;;
  esac
}

# _svc_sha256 FILE: prints the lowercase hex digest.
_svc_sha256() {
  case $_svc_hasher in
    sha256sum) sha256sum "$1" ;;
    shasum) shasum -a 256 "$1" ;;
  esac | awk '{ print $1 }' | tr 'A-F' 'a-f'
}

# _svc_is_ours FILE: FILE is a copy of this tool (a previous install), which may be replaced.
_svc_is_ours() {
  grep -q 'x-service-secret' "$1" 2>/dev/null
}

# _svc_hidden DIR: prints the other `service` command that DIR/service would hide (the first one in a PATH
# entry after DIR) or replace (a different program at DIR/service itself); prints nothing if there is none.
_svc_hidden() {
  if [ -f "$1/service" ] && ! _svc_is_ours "$1/service"; then
    printf '%s\n' "$1/service"
    return 0
  fi
  _svc_after=0
  _svc_ifs=$IFS
  IFS=:
  set -f
  for _svc_entry in ${PATH:-}; do
    case $_svc_entry in
      ?*/) _svc_entry=${_svc_entry%/} ;;
    esac
    if [ "$_svc_entry" = "$1" ]; then
      _svc_after=1
    elif [ "$_svc_after" = 1 ] && [ -f "$_svc_entry/service" ] && [ -x "$_svc_entry/service" ] && ! _svc_is_ours "$_svc_entry/service"; then
      printf '%s\n' "$_svc_entry/service"
      break
    fi
  done
  set +f
  IFS=$_svc_ifs
}

_svc_main() {
  set -eu
  _svc_tmp=""
  _svc_stage=""
  trap '_svc_cleanup' EXIT
  trap 'exit 129' HUP
  trap 'exit 130' INT
  trap 'exit 143' TERM

  # Flags override the environment.
  _svc_version="${SERVICE_VERSION:-latest}"
  _svc_dir="${SERVICE_INSTALL_DIR:-}"
  _svc_base="${SERVICE_BASE_URL:-$DEFAULT_BASE_URL}"
  _svc_dry_run=0
  _svc_allow_shadow=0
  while [ $# -gt 0 ]; do
    case $1 in
      -h | --help)
        _svc_usage
        exit 0
        ;;
      --dry-run) _svc_dry_run=1 ;;
      --allow-shadow) _svc_allow_shadow=1 ;;
      --version | --dir | --base-url)
        if [ $# -lt 2 ] || [ -z "$2" ]; then _svc_usage_err "$1 needs a value"; fi
        case $1 in
          --version) _svc_version=$2 ;;
          --dir) _svc_dir=$2 ;;
          --base-url) _svc_base=$2 ;;
        esac
        shift
        ;;
      --version=?*) _svc_version=${1#--version=} ;;
      --dir=?*) _svc_dir=${1#--dir=} ;;
      --base-url=?*) _svc_base=${1#--base-url=} ;;
      *) _svc_usage_err "unknown option: $1" ;;
    esac
    shift
  done

  # The platform: an explicit allow-list.
  _svc_os=$(uname -s)
  _svc_arch=$(uname -m)
  _svc_asset=""
  if [ "$_svc_os" = Linux ]; then
    case $_svc_arch in
      x86_64 | amd64) _svc_asset=service ;;
      aarch64 | arm64) _svc_asset=service-linux-arm64 ;;
    esac
  fi
  if [ -z "$_svc_asset" ]; then
    _svc_err "unsupported platform: $_svc_os $_svc_arch (from uname -s / uname -m). Supported: Linux x86_64 (amd64) and Linux aarch64 (arm64). Elsewhere, run it from a source checkout: npm install && npm start"
  fi

  # The version: latest, or X.Y.Z with an optional leading v.
  case $_svc_version in
    latest) _svc_path=latest ;;
    v[0-9]* | [0-9]*)
      _svc_version=${_svc_version#v}
      case $_svc_version in
        *[!0-9A-Za-z.+-]*) _svc_usage_err "invalid version: $_svc_version (expected latest, 1.2.3 or v1.2.3)" ;;
      esac
      _svc_path="v$_svc_version"
      ;;
    *) _svc_usage_err "invalid version: $_svc_version (expected latest, 1.2.3 or v1.2.3)" ;;
  esac

  # The base URL, without trailing slashes.
  while :; do
    case $_svc_base in
      */) _svc_base=${_svc_base%/} ;;
      *) break ;;
    esac
  done
  if [ -z "$_svc_base" ]; then _svc_usage_err "empty --base-url"; fi
  _svc_url="$_svc_base/$_svc_path/$_svc_asset"
  _svc_sums_url="$_svc_base/$_svc_path/SHA256SUMS"

  # The install dir: ~/.local/bin, or /usr/local/bin for root; made absolute. Where that would hide another
  # `service` (as root, /usr/local/bin comes before /usr/sbin, whose `service` restarts system services), the
  # default is a dir off PATH.
  _svc_default_dir=0
  _svc_note=""
  if [ -z "$_svc_dir" ]; then
    _svc_default_dir=1
    if [ "$(id -u)" = 0 ]; then
      _svc_dir=/usr/local/bin
      _svc_off_path=/opt/service/bin
    elif [ -n "${HOME:-}" ]; then
      _svc_dir="$HOME/.local/bin"
      _svc_off_path="$HOME/.local/share/service/bin"
    else
      _svc_err "HOME is not set: pass --dir DIR or set SERVICE_INSTALL_DIR"
    fi
  fi
  case $_svc_dir in
    /*) ;;
    *) _svc_dir="$(pwd)/$_svc_dir" ;;
  esac
  while :; do
    case $_svc_dir in
      ?*/) _svc_dir=${_svc_dir%/} ;;
      *) break ;;
    esac
  done
  if [ "$_svc_allow_shadow" = 0 ]; then
    _svc_other=$(_svc_hidden "$_svc_dir")
    if [ -n "$_svc_other" ] && [ "$_svc_default_dir" = 1 ]; then
      _svc_note="another \`service\` command is on your PATH ($_svc_other); $_svc_dir/service would hide it, so this one goes to $_svc_off_path (off PATH): run it by its full path, or pass --dir DIR --allow-shadow to put it on PATH anyway"
      if [ -f "$_svc_dir/service" ]; then
        _svc_note="$_svc_note. An earlier install, $_svc_dir/service, still hides it: remove it (rm $_svc_dir/service)"
      fi
      _svc_dir=$_svc_off_path
      _svc_other=$(_svc_hidden "$_svc_dir")
    fi
    if [ -n "$_svc_other" ]; then
      if [ "$_svc_other" = "$_svc_dir/service" ]; then
        _svc_err "$_svc_other is a different program called service; installing would replace it. Choose another --dir, or pass --allow-shadow to replace it anyway"
      fi
      _svc_err "$_svc_dir/service would hide $_svc_other (another program called service, found later on PATH). Choose another --dir, or pass --allow-shadow to install there anyway"
    fi
  fi
  _svc_target="$_svc_dir/service"

  if [ "$_svc_dry_run" = 1 ]; then
    _svc_say "platform:  $_svc_os $_svc_arch"
    _svc_say "asset:     $_svc_asset"
    _svc_say "version:   $_svc_version"
    _svc_say "url:       $_svc_url"
    _svc_say "checksums: $_svc_sums_url"
    _svc_say "install:   $_svc_target"
    if [ -n "$_svc_note" ]; then _svc_say "note: $_svc_note"; fi
    _svc_say "(dry run: nothing downloaded or installed)"
    exit 0
  fi

  case $_svc_base in
    *.invalid | *.invalid/*) _svc_err "this install.sh has no release location configured yet ($_svc_base): pass --base-url URL (your mirror) or set SERVICE_BASE_URL" ;;
  esac

  # The tools, checked before anything is downloaded.
  if command -v curl >/dev/null 2>&1; then
    _svc_downloader=curl
  elif command -v wget >/dev/null 2>&1; then
    _svc_downloader=wget
  else
    _svc_err "neither curl nor wget was found; install one of them and run this again"
  fi
  if command -v sha256sum >/dev/null 2>&1; then
    _svc_hasher=sha256sum
  elif command -v shasum >/dev/null 2>&1; then
    _svc_hasher=shasum
  else
    _svc_err "neither sha256sum nor shasum was found, so the download cannot be verified; install coreutils (sha256sum) and run this again"
  fi

  _svc_tmp=$(mktemp -d "${TMPDIR:-/tmp}/service-install.XXXXXX") || _svc_err "could not create a temp dir (mktemp -d)"

  _svc_say "downloading $_svc_url"
  _svc_fetch "$_svc_sums_url" "$_svc_tmp/SHA256SUMS" || _svc_err "could not download $_svc_sums_url (is version '$_svc_version' released, and is the base URL right?)"
  _svc_fetch "$_svc_url" "$_svc_tmp/$_svc_asset" || _svc_err "could not download $_svc_url"

  # The SHA-256 check: the line for this asset name in SHA256SUMS ("<hex>  <name>" or "<hex> *<name>").
  _svc_expected=$(awk -v name="$_svc_asset" '{ sub(/\r$/, "") } $2 == name || $2 == ("*" name) { print $1; exit }' "$_svc_tmp/SHA256SUMS" | tr 'A-F' 'a-f')
  case $_svc_expected in
    "" | *[!0-9a-f]*) _svc_err "SHA256SUMS at $_svc_sums_url has no valid line for $_svc_asset; nothing installed" ;;
  esac
  if [ ${#_svc_expected} -ne 64 ]; then
    _svc_err "SHA256SUMS at $_svc_sums_url has no valid line for $_svc_asset; nothing installed"
  fi
  _svc_actual=$(_svc_sha256 "$_svc_tmp/$_svc_asset")
  if [ "$_svc_actual" != "$_svc_expected" ]; then
    printf 'install.sh: error: checksum mismatch for %s; nothing installed\n  expected (SHA256SUMS): %s\n  actual (downloaded):   %s\n' \
      "$_svc_url" "$_svc_expected" "$_svc_actual" >&2
    exit 1
  fi
  _svc_say "verified sha256 $_svc_actual"

  # Stage next to the target (same filesystem), check that it runs, then rename over the target.
  if [ -d "$_svc_target" ]; then _svc_err "$_svc_target is a directory"; fi
  mkdir -p "$_svc_dir" || _svc_err "could not create $_svc_dir (pass --dir DIR, or run as root)"
  _svc_stage="$_svc_dir/.service.install.$$"
  cp "$_svc_tmp/$_svc_asset" "$_svc_stage" || _svc_err "could not write to $_svc_dir (pass --dir DIR, or run as root)"
  chmod 0755 "$_svc_stage"
  _svc_installed_version=$("$_svc_stage" --version </dev/null) || _svc_err "the downloaded binary does not run here ($_svc_stage --version failed); nothing installed"
  mv -f "$_svc_stage" "$_svc_target" || _svc_err "could not move the binary to $_svc_target"
  _svc_stage=""
  _svc_installed_version=$("$_svc_target" --version </dev/null) || _svc_err "$_svc_target --version failed"

  _svc_say "installed service $_svc_installed_version to $_svc_target"
  if [ -n "$_svc_note" ]; then
    _svc_say "note: $_svc_note"
    return 0
  fi
  case ":${PATH:-}:" in
    *":$_svc_dir:"*)
      _svc_found=$(command -v service 2>/dev/null || true)
      if [ -n "$_svc_found" ] && [ "$_svc_found" != "$_svc_target" ]; then
        _svc_say "note: \`service\` on your PATH is $_svc_found, which comes before $_svc_dir; run $_svc_target by its full path, or put $_svc_dir earlier in PATH"
      fi
      ;;
    *)
      # Appended, never prepended: a dir put first would hide another `service` (Debian's /usr/sbin/service).
      _svc_say ""
      _svc_say "$_svc_dir is not on your PATH. To use \`service\`, add this to your shell profile:"
      _svc_say "  export PATH=\"\$PATH:$_svc_dir\""
      _svc_found=$(command -v service 2>/dev/null || true)
      if [ -n "$_svc_found" ]; then
        _svc_say "(\`service\` will still run $_svc_found, which comes first; run $_svc_target by its full path)"
      fi
      ;;
  esac
}

{ _svc_main "$@"; }
