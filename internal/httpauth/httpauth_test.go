package httpauth

import "testing"

func TestBearer(t *testing.T) {
	for header, want := range map[string]string{
		"Bearer tok": "tok", "bearer tok": "tok", "BEARER tok": "tok", "Bearer   tok": "tok",
		"Basic dG9r": "", "Bearertok": "", "Bearer": "", "": "", "tok": "",
	} {
		got, ok := Bearer(header)
		if got != want || ok != (want != "") {
			t.Errorf("Bearer(%q) = %q, %v; want %q", header, got, ok, want)
		}
	}
}
