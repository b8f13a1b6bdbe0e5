#!/usr/bin/env bash
# Installs Talus from this unpacked release folder for the current user (issue #28), no root
# needed:
#
#   ./install.sh               # into ~/.local (or PREFIX=/some/where ./install.sh)
#   ./install.sh --uninstall   # removes what it installed
#
# What goes where under PREFIX: bin/talus; share/talus/presets (the shipped presets);
# share/applications/talus.desktop (the menu entry; it opens .talus and .bhef files);
# share/icons/hicolor/<N>x<N>/apps/talus.png; share/mime/packages/talus.xml (the two file types);
# share/doc/talus (README, licences). Then it refreshes the desktop's caches where the tools
# exist (update-desktop-database, update-mime-database, gtk-update-icon-cache) and says which of
# the libraries Talus loads at run time are missing, with the apt line that adds them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
PREFIX=${PREFIX:-$HOME/.local}
sizes=(256 128 64 48 32)
files=(
  "bin/talus"
  "share/applications/talus.desktop"
  "share/mime/packages/talus.xml"
)
for n in "${sizes[@]}"; do files+=("share/icons/hicolor/${n}x${n}/apps/talus.png"); done

refresh() {
  if command -v update-desktop-database >/dev/null; then
    update-desktop-database -q "$PREFIX/share/applications" || true
  fi
  if command -v update-mime-database >/dev/null; then
    # (it warns on stderr when PREFIX/share is not in XDG_DATA_DIRS: ~/.local/share always is)
    update-mime-database "$PREFIX/share/mime" >/dev/null 2>&1 || true
  fi
  if command -v gtk-update-icon-cache >/dev/null && [ -f "$PREFIX/share/icons/hicolor/index.theme" ]; then
    gtk-update-icon-cache -q -f -t "$PREFIX/share/icons/hicolor" || true
  else
    touch "$PREFIX/share/icons/hicolor" 2>/dev/null || true
  fi
}

if [ "${1:-}" = "--uninstall" ]; then
  for f in "${files[@]}"; do rm -f "$PREFIX/$f"; done
  rm -rf "$PREFIX/share/talus" "$PREFIX/share/doc/talus"
  refresh
  echo "removed Talus from $PREFIX"
  exit 0
elif [ $# -gt 0 ]; then
  echo "usage: $0 [--uninstall]   (PREFIX=$PREFIX)" >&2
  exit 2
fi

install -Dm755 "$here/talus" "$PREFIX/bin/talus"
rm -rf "$PREFIX/share/talus/presets"
mkdir -p "$PREFIX/share/talus"
cp -r "$here/assets/presets" "$PREFIX/share/talus/presets"
# The menu entry runs the installed binary by its full path: ~/.local/bin is not on every
# desktop session's PATH.
mkdir -p "$PREFIX/share/applications"
sed -e "s|^Exec=talus |Exec=$PREFIX/bin/talus |" -e "s|^TryExec=talus$|TryExec=$PREFIX/bin/talus|" \
  "$here/talus.desktop" > "$PREFIX/share/applications/talus.desktop"
chmod 644 "$PREFIX/share/applications/talus.desktop"
install -Dm644 "$here/talus.xml" "$PREFIX/share/mime/packages/talus.xml"
for n in "${sizes[@]}"; do
  install -Dm644 "$here/icons/talus-$n.png" "$PREFIX/share/icons/hicolor/${n}x${n}/apps/talus.png"
done
for f in README.md LICENSE-MIT LICENSE-APACHE; do
  install -Dm644 "$here/$f" "$PREFIX/share/doc/talus/$f"
done
refresh
echo "installed Talus $("$PREFIX/bin/talus" --version 2>/dev/null | sed 's/^talus //') into $PREFIX"

case ":$PATH:" in
  *":$PREFIX/bin:"*) ;;
  *) echo "note: $PREFIX/bin is not on PATH; the menu entry works anyway, add it to PATH for \`talus\` in a terminal" ;;
esac
# What the window loads at run time (dlopen, so ldd does not show it), by Debian package.
# ldconfig is in /sbin, off a user's PATH on Debian; without it nothing is claimed missing.
ldconfig=$(command -v ldconfig || command -v /sbin/ldconfig || command -v /usr/sbin/ldconfig || true)
cache=$([ -n "$ldconfig" ] && "$ldconfig" -p 2>/dev/null || true)
missing=()
while read -r soname package; do
  [ -z "$cache" ] || grep -q "^[[:space:]]*$soname " <<<"$cache" || missing+=("$package")
done <<'LIBS'
libvulkan.so.1 libvulkan1
libX11.so.6 libx11-6
libX11-xcb.so.1 libx11-xcb1
libxcb.so.1 libxcb1
libXcursor.so.1 libxcursor1
libXi.so.6 libxi6
libxkbcommon.so.0 libxkbcommon0
libxkbcommon-x11.so.0 libxkbcommon-x11-0
libdbus-1.so.3 libdbus-1-3
LIBS
if ((${#missing[@]})); then
  echo "note: libraries Talus needs are missing; install them with:"
  echo "  sudo apt install ${missing[*]} mesa-vulkan-drivers"
fi
