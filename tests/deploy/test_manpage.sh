#!/usr/bin/env bash
# edgeshed.8: lint-free for groff and man, generated from the current
# binary (regenerating gives the same page), and covering every subcommand
# and every long option that --help lists, so the page cannot fall behind
# the CLI.
source "$(dirname "$0")/lib.sh"

page=$BUILD_DIR/deploy/edgeshed.8
[ -s "$page" ] || fail "$page was not built"

# groff with every warning; man with its own warning set, as a user's man
# would render it. Any output on stderr is a defect of the page.
groff -man -ww -z -Tutf8 "$page" 2>"$WORK/groff" || fail "groff failed"
[ ! -s "$WORK/groff" ] || { cat "$WORK/groff"; fail "groff -ww warns about the page"; }
MANWIDTH=80 man --warnings -l "$page" >"$WORK/text" 2>"$WORK/man" || fail "man -l failed"
[ ! -s "$WORK/man" ] || { cat "$WORK/man"; fail "man --warnings warns about the page"; }
pass "groff -ww and man --warnings: no warnings"

bash "$SOURCE_DIR/scripts/gen_manpage.sh" "$EDGESHED" "$WORK/again.8"
cmp -s "$page" "$WORK/again.8" || fail "the built page is not what the current binary's --help gives"
pass "the built page is the one the current binary generates"

# Every subcommand in --help has its section, and every long option of each
# subcommand's --help is in the rendered text (man turns \- back into -).
subs=$("$EDGESHED" --help | awk '/^Subcommands:$/ { on = 1; next } /^[^ ]/ { on = 0 } on && /^  [^ ]/ { print $1 }')
[ -n "$subs" ] || fail "no subcommands in edgeshed --help"
n=0
for sub in $subs; do
	grep -qE "^ +edgeshed $sub( |$)" "$WORK/text" || fail "no section for 'edgeshed $sub'"
	for opt in $("$EDGESHED" "$sub" --help | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
		# The option as a word in the section of its subcommand.
		awk -v sub_="edgeshed $sub" -v opt="$opt" '
			$0 ~ "^   edgeshed " { in_sec = index($0, sub_) > 0 }
			in_sec && index($0, opt) { found = 1 }
			END { exit !found }' "$WORK/text" || fail "'edgeshed $sub $opt' is not in the page"
		n=$((n + 1))
	done
done
pass "$(wc -w <<<"$subs") subcommands and their $n long options are all in the page"
