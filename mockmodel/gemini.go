package mockmodel

import (
	"net/http"
	"strings"
)

// geminiAPI is the Gemini API (POST /v1beta/models/M:streamGenerateContent?alt=sse and
// :generateContent) as the @google/genai SDK in Gemini CLI reads it: `data:` chunks of
// GenerateContentResponse, the last one with finishReason and usageMetadata.
type geminiAPI struct{}

func (geminiAPI) name() string { return APIGemini }

func (geminiAPI) parse(r *http.Request, body map[string]any) parsed {
	p := parsed{Model: modelFromPath(r.URL.Path), Stream: strings.HasSuffix(r.URL.Path, ":streamGenerateContent")}
	for _, t := range list(body["tools"]) {
		for _, fd := range list(obj(t)["functionDeclarations"]) {
			m := obj(fd)
			schema := obj(m["parametersJsonSchema"])
			if schema == nil {
				schema = obj(m["parameters"])
			}
			if name := str(m["name"]); name != "" {
				p.Tools = append(p.Tools, toolSpec{Name: name, Schema: schema})
			}
		}
	}
	for _, c := range list(body["contents"]) {
		for _, part := range list(obj(c)["parts"]) {
			if obj(part)["functionResponse"] != nil {
				p.ToolResults++
			}
		}
	}
	return p
}

func (geminiAPI) errorStatus(t *Turn) int { return scriptedStatus(t, http.StatusServiceUnavailable) }

var geminiErrors = [...]struct{ status, msg string }{
	errServer:     {"INTERNAL", "mockmodel: scripted internal server error"},
	errOverloaded: {"UNAVAILABLE", "The model is overloaded. Please try again later."},
	errRateLimit:  {"RESOURCE_EXHAUSTED", "mockmodel: scripted rate limit"},
	errBadRequest: {"INVALID_ARGUMENT", "mockmodel: bad request"},
}

func (geminiAPI) errorBody(status int, overloaded bool) any {
	e := geminiErrors[classify(status, overloaded)]
	return map[string]any{"error": map[string]any{"code": status, "message": e.msg, "status": e.status}}
}

// usage is the turn's usageMetadata as the Gemini API counts: the
// candidates leave the thoughts out, and the total is the prompt, the
// candidates and the thoughts (a scenario's output holds its reasoning).
// Candidates that held the thoughts, in a total without them, gave the
// CLI's stats no thoughts to recover: Gemini's reasoning came out 0.
func (geminiAPI) usage(u Usage) map[string]any {
	return map[string]any{
		"promptTokenCount": u.InputTokens, "candidatesTokenCount": u.OutputTokens - u.ReasoningTokens, "totalTokenCount": u.Total(),
		"cachedContentTokenCount": u.CachedTokens, "thoughtsTokenCount": u.ReasoningTokens,
	}
}

func (geminiAPI) callParts(p *plan) []any {
	var parts []any
	for _, c := range p.Calls {
		args := argsOrEmpty(c)
		if c.Custom {
			args = map[string]any{"input": c.Input}
		}
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Name, "args": args}})
	}
	return parts
}

func (g geminiAPI) chunk(p *plan, parts []any, final bool) map[string]any {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	m := map[string]any{"candidates": []any{cand}, "modelVersion": p.Model, "responseId": p.ID}
	if final {
		cand["finishReason"] = "STOP"
		m["usageMetadata"] = g.usage(p.Usage)
	}
	return m
}

func (g geminiAPI) stream(sw *sse, p *plan) {
	if !sw.text(p, func(text string) { sw.event("", g.chunk(p, []any{map[string]any{"text": text}}, false)) }) {
		return
	}
	for range p.Calls {
		if !sw.pause(p.Delay) {
			return
		}
	}
	parts := g.callParts(p)
	if parts == nil {
		parts = []any{map[string]any{"text": ""}}
	}
	sw.event("", g.chunk(p, parts, true))
}

func (g geminiAPI) complete(p *plan) any {
	var parts []any
	if text := joined(p.Text); text != "" {
		parts = append(parts, map[string]any{"text": text})
	}
	parts = append(parts, g.callParts(p)...)
	if parts == nil {
		parts = []any{map[string]any{"text": ""}}
	}
	return g.chunk(p, parts, true)
}
