package bench

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"
)

// JobSpec describes a Kubernetes Indexed Job that runs a bench plan as
// Shards shards, one pod per shard index: each runs Command Args plus
// --shard $(JOB_COMPLETION_INDEX)/Shards --results ResultsMount.
type JobSpec struct {
	Name      string // the Job's name (DNS-1123 label)
	Namespace string // "" leaves it to kubectl's context
	Image     string
	// Command is the executable in the image; nil means ["harness"].
	Command []string
	// Args are harness's arguments that define the plan and how each run
	// goes ("bench", then its flags), without --shard, --results or
	// --report: the Job adds them. Command and Args are literal: the
	// manifest escapes them (k8sEscape), so a pod gets them as given.
	Args        []string
	Shards      int
	Parallelism int // pods at once; 0 means Shards
	// ResultsClaim is a PersistentVolumeClaim (ReadWriteMany when pods
	// may land on several nodes) mounted at ResultsMount; "" mounts an
	// emptyDir, which survives the container's restarts but not its pod.
	ResultsClaim string
	// EnvFromSecrets are Secrets whose keys become the container's
	// environment (the agents' API keys): envFrom, never values.
	EnvFromSecrets []string
	WorkingDir     string // the container's working directory; "" is the image's
	PlanID         string // labels the Job and its pods
	BackoffLimit   *int   // retries of failed pods; nil is Kubernetes' default
}

// ResultsMount is where the Job's pods mount the results volume.
const ResultsMount = "/results"

// IndexEnv is the variable Kubernetes sets to a pod's completion index.
const IndexEnv = "JOB_COMPLETION_INDEX"

// dns1123 is a Kubernetes object name; compiled on first use, as validID.
var dns1123 = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`) })

// ContainerArgs are the arguments of every pod's container, as the
// manifest holds them: Args escaped, then the Job's own flags, where
// $(JOB_COMPLETION_INDEX) is the only reference Kubernetes expands.
func (j JobSpec) ContainerArgs() []string {
	args := k8sEscape(j.Args)
	return append(args, "--shard", "$("+IndexEnv+")/"+strconv.Itoa(j.Shards),
		"--results", ResultsMount, "--report", "json", "--exit-zero", "--no-store")
}

// k8sEscape doubles every $ of ss: Kubernetes expands $(VAR) in a
// container's command and args (from the container's environment, API
// keys of --env-from-secret included) and turns $$ into $, so a prompt
// holding $(JOB_COMPLETION_INDEX) would differ per shard and one holding
// $(ANTHROPIC_API_KEY) would carry the key to the agent. $$ always
// becomes one $, whatever follows it.
func k8sEscape(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ReplaceAll(s, "$", "$$")
	}
	return out
}

// Manifest renders the Job as YAML (batch/v1, completionMode Indexed).
func (j JobSpec) Manifest() ([]byte, error) {
	switch {
	case !dns1123().MatchString(j.Name):
		return nil, fmt.Errorf("bench: k8s job name %q: want lowercase letters, digits and '-', at most 63", j.Name)
	case j.Image == "":
		return nil, errors.New("bench: k8s job: no --image")
	case j.Shards < 1:
		return nil, fmt.Errorf("bench: k8s job: --shards %d: want 1 or more", j.Shards)
	case j.Parallelism < 0:
		return nil, fmt.Errorf("bench: k8s job: --parallelism %d: want 1 or more", j.Parallelism)
	}
	for _, s := range append([]string{j.ResultsClaim}, j.EnvFromSecrets...) {
		if s != "" && !dns1123().MatchString(s) {
			return nil, fmt.Errorf("bench: k8s job: %q is not a valid Kubernetes object name", s)
		}
	}
	cmd := j.Command
	if cmd == nil {
		cmd = []string{"harness"}
	}
	par := j.Parallelism
	if par == 0 || par > j.Shards {
		par = j.Shards
	}
	labels := map[string]string{"app.kubernetes.io/name": "harness-bench", "app.kubernetes.io/instance": j.Name}
	if j.PlanID != "" {
		labels["harness.dev/plan"] = short(j.PlanID)
	}
	vol := k8sVolume{Name: "results"}
	if j.ResultsClaim != "" {
		vol.PersistentVolumeClaim = &k8sClaim{ClaimName: j.ResultsClaim}
	} else {
		vol.EmptyDir = &struct{}{}
	}
	c := k8sContainer{
		Name: "bench", Image: j.Image, Command: k8sEscape(cmd), Args: j.ContainerArgs(), WorkingDir: j.WorkingDir,
		// Declared, not only injected, so that $(JOB_COMPLETION_INDEX)
		// in args expands on every Kubernetes version with Indexed Jobs.
		Env: []k8sEnv{{Name: IndexEnv, ValueFrom: &k8sEnvSource{FieldRef: &k8sFieldRef{
			FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}},
		VolumeMounts: []k8sMount{{Name: "results", MountPath: ResultsMount}},
	}
	for _, s := range j.EnvFromSecrets {
		c.EnvFrom = append(c.EnvFrom, k8sEnvFrom{SecretRef: &k8sRef{Name: s}})
	}
	job := k8sJob{
		APIVersion: "batch/v1", Kind: "Job",
		Metadata: k8sMeta{Name: j.Name, Namespace: j.Namespace, Labels: labels},
		Spec: k8sJobSpec{
			CompletionMode: "Indexed", Completions: j.Shards, Parallelism: par, BackoffLimit: j.BackoffLimit,
			Template: k8sPodTemplate{
				Metadata: k8sMeta{Labels: labels},
				// OnFailure restarts the container in its pod, where the
				// results volume (even an emptyDir) still holds the rows:
				// the bench resumes.
				Spec: k8sPodSpec{RestartPolicy: "OnFailure", Containers: []k8sContainer{c}, Volumes: []k8sVolume{vol}},
			},
		},
	}
	return yaml.Marshal(job)
}

// The manifest's shape: the few fields of batch/v1 Job it sets, named as
// in the Kubernetes API (a test decodes it strictly into the real types).
type (
	k8sJob struct {
		APIVersion string     `json:"apiVersion"`
		Kind       string     `json:"kind"`
		Metadata   k8sMeta    `json:"metadata"`
		Spec       k8sJobSpec `json:"spec"`
	}
	k8sMeta struct {
		Name      string            `json:"name,omitempty"`
		Namespace string            `json:"namespace,omitempty"`
		Labels    map[string]string `json:"labels,omitempty"`
	}
	k8sJobSpec struct {
		CompletionMode string         `json:"completionMode"`
		Completions    int            `json:"completions"`
		Parallelism    int            `json:"parallelism"`
		BackoffLimit   *int           `json:"backoffLimit,omitempty"`
		Template       k8sPodTemplate `json:"template"`
	}
	k8sPodTemplate struct {
		Metadata k8sMeta    `json:"metadata"`
		Spec     k8sPodSpec `json:"spec"`
	}
	k8sPodSpec struct {
		RestartPolicy string         `json:"restartPolicy"`
		Containers    []k8sContainer `json:"containers"`
		Volumes       []k8sVolume    `json:"volumes"`
	}
	k8sContainer struct {
		Name         string       `json:"name"`
		Image        string       `json:"image"`
		Command      []string     `json:"command"`
		Args         []string     `json:"args"`
		WorkingDir   string       `json:"workingDir,omitempty"`
		Env          []k8sEnv     `json:"env,omitempty"`
		EnvFrom      []k8sEnvFrom `json:"envFrom,omitempty"`
		VolumeMounts []k8sMount   `json:"volumeMounts"`
	}
	k8sEnv struct {
		Name      string        `json:"name"`
		ValueFrom *k8sEnvSource `json:"valueFrom,omitempty"`
	}
	k8sEnvSource struct {
		FieldRef *k8sFieldRef `json:"fieldRef,omitempty"`
	}
	k8sFieldRef struct {
		FieldPath string `json:"fieldPath"`
	}
	k8sEnvFrom struct {
		SecretRef *k8sRef `json:"secretRef,omitempty"`
	}
	k8sRef struct {
		Name string `json:"name"`
	}
	k8sMount struct {
		Name      string `json:"name"`
		MountPath string `json:"mountPath"`
	}
	k8sVolume struct {
		Name                  string    `json:"name"`
		PersistentVolumeClaim *k8sClaim `json:"persistentVolumeClaim,omitempty"`
		EmptyDir              *struct{} `json:"emptyDir,omitempty"`
	}
	k8sClaim struct {
		ClaimName string `json:"claimName"`
	}
)
