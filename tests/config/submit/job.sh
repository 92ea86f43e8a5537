#!/bin/sh
echo "job $1 on $(hostname)"
