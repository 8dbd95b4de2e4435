package logger

import "strings"

// SecretFlag reports whether the name of a command-line flag (api-key of
// --api-key, token of -token) or of a NAME=VALUE argument (API_KEY,
// model_providers.x.api_key) names a secret: the names whose values the
// redactor takes whole after "key=" or a JSON key (secretKey: …api_key,
// …token, …secret, …password, …credentials, …), and, as flags name
// credentials so, those ending in "auth" (--auth user:pass, --proxy-auth).
func SecretFlag(name string) bool {
	if name == "" {
		return false
	}
	if secretKey([]byte(name)) {
		return true
	}
	n := strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(name))
	return strings.HasSuffix(n, "auth")
}

// RedactArgv returns a copy of argv with the values of its secret flags
// replaced by Redacted: of "--api-key=VALUE" and "-token=VALUE" after the
// "=", of "--api-key VALUE" the next argument, and of a NAME=VALUE
// argument (an env or config override: API_KEY=…, -c x.api_key=…) after
// the "=", for the names SecretFlag knows. The next argument is taken
// for no value when it starts with "--" (a flag, or the end of options):
// no secret starts so. A boolean flag of such a name (--no-auth) hides
// the argument after it: less shown, nothing leaked. argv[prompt] (-1:
// none) is the prompt: neither a flag nor a value, kept as it is;
// argv[0], the program, is kept too.
func RedactArgv(argv []string, prompt int) []string {
	out := append([]string(nil), argv...)
	for i := 1; i < len(out); i++ {
		if i == prompt {
			continue
		}
		a := out[i]
		flag := strings.TrimLeft(a, "-")
		if flag == "" {
			continue // "-", "--"
		}
		name, val, eq := strings.Cut(flag, "=")
		if !SecretFlag(name) || eq && (val == "" || val == Redacted) {
			continue
		}
		switch {
		case eq:
			out[i] = a[:len(a)-len(val)] + Redacted
		case flag != a && i+1 < len(out) && i+1 != prompt && !strings.HasPrefix(out[i+1], "--"):
			i++
			out[i] = Redacted
		}
	}
	return out
}
