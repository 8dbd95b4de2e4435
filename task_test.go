package harness

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
)

// notForAdapter lists the fields of Task that intentionally do not reach
// adapters.Task, with why: they pick or start the process, shape the
// stream or the log, none of them is part of the agent's command line.
var notForAdapter = map[string]string{
	"Agent":      "picks the adapter itself",
	"Binary":     "resolved by Prepare into the command's binary",
	"binaryFrom": "where Binary came from, for Prepare's not-installed error",
	"SearchDirs": "where Prepare looks for the binary",
	"Env":        "added to the process environment by Prepare",
	"SetupEnv":   "added to the process environment by Prepare",
	"Sandbox":    "Prepare gives its Cwd to the adapter and puts its Prefix before the command line",
	"BaseEnv":    "the environment Prepare starts from",
	"PTY":        "how the process is started",
	"Raw":        "what the stream emits",
	"MaxLine":    "the stdout line cap of the process",
	"Budgets":    "the supervisor's watchdogs",
	"Run":        "the run id of the stream and the log",
	"Protocol":   "picks the adapter (protocols.go)",
	"Command":    "replaces the adapter's command line",
}

// TestAdapterTaskCarriesEveryField fails when a field is added to Task or
// adapters.Task and adapterTask does not carry it (it would compile and
// be dropped silently), or when a field of Task that stays behind is not
// listed in notForAdapter.
func TestAdapterTaskCarriesEveryField(t *testing.T) {
	var task Task
	tv := reflect.ValueOf(&task).Elem()
	at := reflect.TypeOf(adapters.Task{})
	for i := 0; i < at.NumField(); i++ {
		f := at.Field(i)
		require.NotContains(t, notForAdapter, f.Name, "adapters.Task.%s is listed as not carried", f.Name)
		hf, ok := tv.Type().FieldByName(f.Name)
		require.True(t, ok, "adapters.Task.%s has no field of the same name in harness.Task", f.Name)
		require.Equal(t, f.Type, hf.Type, "type of Task.%s", f.Name)
		setNonZero(t, tv.FieldByIndex(hf.Index), i+1)
	}
	for i := 0; i < tv.NumField(); i++ {
		name := tv.Type().Field(i).Name
		if _, ok := at.FieldByName(name); !ok {
			require.Contains(t, notForAdapter, name, "Task.%s does not reach adapters.Task: carry it in adapterTask or list it in notForAdapter", name)
		}
	}
	got := reflect.ValueOf(task.adapterTask())
	for i := 0; i < at.NumField(); i++ {
		name := at.Field(i).Name
		require.Equal(t, tv.FieldByName(name).Interface(), got.Field(i).Interface(), "adapterTask drops Task.%s", name)
	}
}

// setNonZero gives v a value distinct per field (n), so a field carried
// into another one's place shows too.
func setNonZero(t *testing.T, v reflect.Value, n int) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString("v" + string(rune('a'+n)))
	case reflect.Int:
		v.SetInt(int64(n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		setNonZero(t, s.Index(0), n)
		v.Set(s)
	default:
		t.Fatalf("setNonZero: no value for kind %s: extend it", v.Kind())
	}
}
