test -f out.txt
