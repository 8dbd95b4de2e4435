// Package jaeger starts the Jaeger v2 build that scripts/jaeger.sh caches
// (make jaeger) on 127.0.0.1, as the real OTLP backend of the end-to-end
// tests and of make bench's --otlp rows.
package jaeger

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

// Version is the Jaeger release scripts/jaeger.sh builds (with only the
// components Start configures: its cache is jaeger-VERSION-min).
const Version = "v1.76.0"

// Binary is the cached build: $HARNESS_JAEGER, else where scripts/jaeger.sh
// puts it. It fails when there is none.
func Binary() (string, error) {
	if p := os.Getenv("HARNESS_JAEGER"); p != "" {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	p := filepath.Join(home, ".cache", "harness", "jaeger-"+Version+"-min")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("jaeger is not built (run 'make jaeger'): %v", err)
	}
	return p, nil
}

// Server is a running Jaeger: OTLP/HTTP at OTLP, its query API at Query.
type Server struct {
	OTLP, Query string
	cmd         *exec.Cmd
	log         string
}

// Start runs Jaeger with in-memory storage, its OTLP/HTTP receiver and
// query API on free ports of 127.0.0.1, its config and log in dir, and
// waits (up to a minute) until its query API answers.
func Start(dir string) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	otlpPort, queryPort, grpcPort := ports[0], ports[1], ports[2]
	cfg := fmt.Sprintf(`service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: mem
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
processors:
  batch:
    timeout: 50ms
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`, queryPort, grpcPort, otlpPort)
	path := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	s := &Server{OTLP: fmt.Sprintf("http://127.0.0.1:%d", otlpPort),
		Query: fmt.Sprintf("http://127.0.0.1:%d", queryPort), log: filepath.Join(dir, "jaeger.log")}
	log, err := os.Create(s.log)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	s.cmd = exec.Command(bin, "--config", path)
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(time.Minute)
	for !s.answers() {
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("jaeger's query API did not answer within a minute: %s", s.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return s, nil
}

func (s *Server) answers() bool {
	resp, err := http.Get(s.Query + "/api/services")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// HasService fails unless Jaeger holds spans of service.
func (s *Server) HasService(service string) error {
	resp, err := http.Get(s.Query + "/api/services")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct{ Data []string }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("jaeger's /api/services: %v", err)
	}
	if !slices.Contains(body.Data, service) {
		return fmt.Errorf("jaeger holds no span of %s (services: %v)", service, body.Data)
	}
	return nil
}

// Stop kills Jaeger and waits for it.
func (s *Server) Stop() {
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

// Log is what Jaeger printed.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.log)
	return string(b)
}

// freePorts are n ports of 127.0.0.1 free a moment ago, held open
// together so that they differ.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
