#!/bin/bash
cd /work/wt/w38c/runs/f
./ab2.sh all-structured-code-a:1+1 azure-code-b-x2:4+4 azure-code-b:1+1 > ab2.out 2>&1
./clair.sh > clair.out 2>&1
