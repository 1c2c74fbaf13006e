#!/bin/sh
# trees.sh [CORPUS_DIR] recreates a corpus's trees at their pinned commits, outside this
# repository: one git checkout per line of CORPUS_DIR/repos.txt (default: this script's
# directory; $ONCE_REALWORLD_REPOS names another repos file), in $ONCE_REALWORLD_TREES
# (default once-realworld under the user cache directory, as Go's os.UserCacheDir picks it).
#
# A corpus directory may hold placeholders.txt, one "owner/name path" a line: an empty file
# created at path in that tree when missing (a frontend build a go:embed names, such as
# api/public/index.html); and prepare.sh, run as "prepare.sh owner/name TREE" after each
# checkout for any other step a tree needs to type-check.
#
# Each tree is cloned from its public GitHub URL. To clone from copies already on the
# machine instead, set ONCE_REALWORLD_MIRROR to a path template in which {owner} and {name}
# are replaced, e.g. ONCE_REALWORLD_MIRROR='/srv/git/{owner}+{name}/repo'.
#
# A tree already at its commit is left alone; one at another commit is checked out again.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
corpus=${1:-$here}
corpus=$(cd "$corpus" && pwd)
repos=${ONCE_REALWORLD_REPOS:-$corpus/repos.txt}
if [ -n "${ONCE_REALWORLD_TREES:-}" ]; then
	trees=$ONCE_REALWORLD_TREES
elif [ "$(uname)" = Darwin ]; then
	trees=$HOME/Library/Caches/once-realworld
else
	trees=${XDG_CACHE_HOME:-$HOME/.cache}/once-realworld
fi
mkdir -p "$trees"

# prepare makes a tree type-check where its build needs a step the corpus does not run:
# a frontend build embedded with go:embed gets one placeholder file, and a generated Go
# file too large for some copies of a repository (ent's mutation.go in openmeter, over
# 4 MiB) is generated again by the repository's own go:generate step. The check after
# prepare shows the regenerated file is the committed one, byte for byte.
prepare() {
	case $1 in
	openmeterio/openmeter)
		if [ ! -e "$2/openmeter/ent/db/mutation.go" ]; then
			echo "openmeterio/openmeter: generating openmeter/ent/db (a few minutes)"
			(cd "$2/openmeter/ent" && GOWORK=off GOFLAGS= go run -mod=readonly entc.go)
		fi
		;;
	icereed/paperless-gpt)
		mkdir -p "$2/web-app/dist"
		[ -e "$2/web-app/dist/index.html" ] || : >"$2/web-app/dist/index.html"
		;;
	esac
	if [ -f "$corpus/placeholders.txt" ]; then
		grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$corpus/placeholders.txt" | while read -r r path; do
			if [ "$r" = "$1" ] && [ ! -e "$2/$path" ]; then
				mkdir -p "$(dirname "$2/$path")" && : >"$2/$path"
			fi
		done
	fi
	if [ -x "$corpus/prepare.sh" ]; then
		"$corpus/prepare.sh" "$1" "$2"
	fi
}

grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$repos" | while read -r repo commit _; do
	owner=${repo%%/*}
	name=${repo#*/}
	tree=$trees/$owner+$name
	if [ -n "${ONCE_REALWORLD_MIRROR:-}" ]; then
		src=$(printf '%s' "$ONCE_REALWORLD_MIRROR" | sed -e "s|{owner}|$owner|g" -e "s|{name}|$name|g")
	else
		src=https://github.com/$repo.git
	fi
	if [ ! -d "$tree/.git" ]; then
		echo "clone $repo from $src"
		git clone -q --no-checkout "$src" "$tree"
	fi
	if [ "$(git -C "$tree" rev-parse HEAD 2>/dev/null || true)" = "$commit" ] && [ -z "$(git -C "$tree" status --porcelain --untracked-files=no -- '*.go' go.mod go.sum)" ]; then
		prepare "$repo" "$tree"
		echo "$repo at $commit"
		continue
	fi
	if ! git -C "$tree" cat-file -e "$commit^{commit}" 2>/dev/null; then
		git -C "$tree" fetch -q origin "$commit"
	fi
	# A copy may lack its largest files (data, bundles); they are not Go code, so the
	# checkout goes on without them and only the Go files are required to be there.
	git -C "$tree" -c advice.detachedHead=false checkout -q -f "$commit" 2>/dev/null || true
	if [ "$(git -C "$tree" rev-parse HEAD)" != "$commit" ]; then
		echo "trees.sh: $repo: could not check out $commit" >&2
		exit 1
	fi
	prepare "$repo" "$tree"
	if [ -n "$(git -C "$tree" status --porcelain --untracked-files=no -- '*.go' go.mod go.sum)" ]; then
		echo "trees.sh: $repo: Go files missing or changed after checkout of $commit" >&2
		exit 1
	fi
	echo "$repo at $commit"
done
