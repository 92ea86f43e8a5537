#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# count.sh — the travelling job of `make demo`: says where it runs (its
# sandbox, not the submit directory), what arrived there, and counts the
# words of its input into counts.txt, which travels back.
echo "$(id -un) in $(pwd)"
echo "arrived: $(ls | tr '\n' ' ')"
tr -s ' \t' '\n\n' <words.txt | sort | uniq -c | sort -rn >counts.txt
echo "counted $(wc -w <words.txt) words into counts.txt"
