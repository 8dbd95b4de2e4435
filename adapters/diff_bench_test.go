package adapters

import "testing"

// BenchmarkDiffOrSkip is the diffs `harness parse` makes of the Gemini,
// Claude and Cursor benchmark streams, one of each kind: small files
// created, edited (a line changed, added or removed, a last line without
// its newline, an edit the line LCS search has to find) and removed.
func BenchmarkDiffOrSkip(b *testing.B) {
	greet := "package main\n\nfunc hello() string {\n\treturn \"hello\"\n}\n\nfunc main() {\n\tprintln(hello())\n}\n"
	cases := []struct {
		path          string
		before, after File
	}{
		{"/tmp/work/greet.go", File{}, Present(greet)},
		{"/tmp/work/greet.go", Present(greet), Present("package main\n\nfunc hi() string {\n\treturn \"hello\"\n}\n\nfunc main() {\n\tprintln(hello())\n}\n")},
		{"/tmp/hce/g3/NOTES.md", Present("# Notes\n\nalpha\nbeta\n"), Present("# Notes\n\nalpha\nBETA\ngamma\n")},
		{"/tmp/hce/g3/v.txt", Present("v1"), Present("v2")},
		{"pre.txt", Present("alpha\nbeta\ngamma\nbeta again"), Present("alpha\nBETA\ngamma\nBETA again")},
		{"/home/dev/app/notes.md", Present("# Notes\n\n- port is 8080\n"), Present("# Notes\n\n- port is 8080\n- old.txt removed\n")},
		{"/home/dev/app/old.txt", Present("obsolete\nstuff"), File{}},
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range cases {
			DiffOrSkip(c.path, c.before, c.after)
		}
	}
}
