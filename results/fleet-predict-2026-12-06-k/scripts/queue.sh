#!/bin/bash
# runs the lines of the file $1 (TAG CODE WINDOW SEED [args]) one after the other
while read -r line; do [ -z "$line" ] && continue; ./bench1.sh $line; done < "$1"
