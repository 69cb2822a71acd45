package installcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
)

// The kinds of the chart's admission objects.
const (
	KindPolicy        = "ValidatingAdmissionPolicy"
	KindPolicyBinding = "ValidatingAdmissionPolicyBinding"
)

const admissionAPIVersion = "admissionregistration.k8s.io/v1"

// resources maps each kind to its resource in admissionregistration.k8s.io/v1.
var resources = map[string]string{
	KindPolicy:        "validatingadmissionpolicies",
	KindPolicyBinding: "validatingadmissionpolicybindings",
}

// PolicyObject is one admission policy or binding as the chart rendered it.
type PolicyObject struct {
	Kind string
	Name string
	// Spec is the rendered spec, decoded from JSON (numbers are float64).
	Spec map[string]any
}

func (o PolicyObject) String() string { return o.Kind + " " + o.Name }

// ReadPoliciesFile reads the chart's expected-policies file (the
// <release>-admission-policies ConfigMap's policies.yaml, mounted).
// Design: the expected set is the chart's own rendering of the policies,
// shipped in that ConfigMap, so nothing here knows which policies exist.
func ReadPoliciesFile(path string) ([]PolicyObject, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the expected admission policies: %w", err)
	}
	objects, err := ReadPolicies(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("reading the expected admission policies from %s: %w", path, err)
	}
	return objects, nil
}

// ReadPolicies parses a YAML stream of ValidatingAdmissionPolicies and
// bindings; empty documents are skipped, anything else is an error.
func ReadPolicies(r io.Reader) ([]PolicyObject, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var out []PolicyObject
	for {
		var doc map[string]any
		if err := decoder.Decode(&doc); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		if doc == nil {
			continue
		}
		kind, _ := doc["kind"].(string)
		apiVersion, _ := doc["apiVersion"].(string)
		metadata, _ := doc["metadata"].(map[string]any)
		name, _ := metadata["name"].(string)
		spec, _ := doc["spec"].(map[string]any)
		if _, known := resources[kind]; !known || apiVersion != admissionAPIVersion {
			return nil, fmt.Errorf("%s %s %q is not a %s ValidatingAdmissionPolicy or binding", apiVersion, kind, name, admissionAPIVersion)
		}
		if name == "" || spec == nil {
			return nil, fmt.Errorf("%s %q has no name or no spec", kind, name)
		}
		out = append(out, PolicyObject{Kind: kind, Name: name, Spec: spec})
	}
}

// Getter reads a live policy or binding, decoded from JSON; for one that
// does not exist it returns an error for which apierrors.IsNotFound holds.
type Getter func(ctx context.Context, kind, name string) (map[string]any, error)

// RESTGetter reads through a REST client of admissionregistration.k8s.io/v1,
// such as kubernetes.Interface's AdmissionregistrationV1().RESTClient(): one
// GET by name per object, which RBAC can grant by resourceNames.
func RESTGetter(c rest.Interface) Getter {
	return func(ctx context.Context, kind, name string) (map[string]any, error) {
		raw, err := c.Get().Resource(resources[kind]).Name(name).SetHeader("Accept", "application/json").Do(ctx).Raw()
		if err != nil {
			return nil, err
		}
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, fmt.Errorf("decoding %s %s: %w", kind, name, err)
		}
		return obj, nil
	}
}

// PolicyProblem says how one of the chart's policies or bindings differs
// from what the chart rendered.
type PolicyProblem struct {
	Kind, Name string
	// Details are "missing", "cannot be read: ...", or one line per field
	// that differs.
	Details []string
}

func (p PolicyProblem) String() string {
	return fmt.Sprintf("%s %s: %s", p.Kind, p.Name, strings.Join(p.Details, "; "))
}

// CheckPolicies reads each expected object and returns those that are
// missing, cannot be read, or differ from their rendering in a way that
// changes what they enforce, in the order of expected.
func CheckPolicies(ctx context.Context, get Getter, expected []PolicyObject) []PolicyProblem {
	var problems []PolicyProblem
	for _, want := range expected {
		live, err := get(ctx, want.Kind, want.Name)
		var details []string
		switch {
		case apierrors.IsNotFound(err):
			details = []string{"missing"}
		case err != nil:
			details = []string{"cannot be read: " + err.Error()}
		default:
			liveSpec, _ := live["spec"].(map[string]any)
			details = SpecDifferences(want.Spec, liveSpec)
		}
		if len(details) > 0 {
			problems = append(problems, PolicyProblem{Kind: want.Kind, Name: want.Name, Details: details})
		}
	}
	return problems
}

// serverDefaults are the fields the API server fills in when a policy or
// binding leaves them out (k8s.io/api admissionregistration/v1 defaults),
// keyed by path with list indices written []. Only these may appear in a
// live spec without being rendered, and only with these values: anything
// else the chart did not render (a paramRef, matchResources on a binding,
// a namespaceSelector, excludeResourceRules) can only narrow or weaken.
var serverDefaults = map[string]any{
	"spec.failurePolicy":                          "Fail",
	"spec.matchConstraints.matchPolicy":           "Equivalent",
	"spec.matchConstraints.namespaceSelector":     map[string]any{},
	"spec.matchConstraints.objectSelector":        map[string]any{},
	"spec.matchConstraints.resourceRules[].scope": "*",
}

// SpecDifferences compares a live spec with the rendered one: every
// rendered field must be present with the same value, lists with the same
// items in the same order (so validationActions is exactly what was
// rendered), and a field the chart did not render may be present only as
// the API server defaults it. It returns one line per difference, in a
// stable order; none for a spec that enforces what was rendered.
func SpecDifferences(want, got map[string]any) []string {
	if got == nil {
		return []string{"spec is missing"}
	}
	return differences("spec", "spec", want, got)
}

// differences compares want and got at path; pattern is path with list
// indices written [] (the key of serverDefaults).
func differences(path, pattern string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{mismatch(path, want, got)}
		}
		var out []string
		for _, key := range sortedKeys(w) {
			if _, found := g[key]; !found {
				out = append(out, path+"."+key+" is missing")
				continue
			}
			out = append(out, differences(path+"."+key, pattern+"."+key, w[key], g[key])...)
		}
		for _, key := range sortedKeys(g) {
			if _, rendered := w[key]; rendered {
				continue
			}
			if d, defaulted := serverDefaults[pattern+"."+key]; !defaulted || !reflect.DeepEqual(d, g[key]) {
				out = append(out, unrendered(path+"."+key, g[key]))
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok {
			return []string{mismatch(path, want, got)}
		}
		if len(g) != len(w) {
			return []string{fmt.Sprintf("%s has %d items, want %d", path, len(g), len(w))}
		}
		var out []string
		for i := range w {
			out = append(out, differences(fmt.Sprintf("%s[%d]", path, i), pattern+"[]", w[i], g[i])...)
		}
		return out
	default:
		if !reflect.DeepEqual(want, got) {
			return []string{mismatch(path, want, got)}
		}
		return nil
	}
}

// mismatch describes a differing value; long values (CEL expressions) are
// named, not printed.
func mismatch(path string, want, got any) string {
	w, g := show(want), show(got)
	if len(w) > 60 || len(g) > 60 {
		return path + " differs from the chart's"
	}
	return fmt.Sprintf("%s is %s, want %s", path, g, w)
}

func unrendered(path string, got any) string {
	if g := show(got); len(g) <= 60 {
		return fmt.Sprintf("%s is set to %s, which the chart does not render", path, g)
	}
	return path + " is set, which the chart does not render"
}

func show(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ProblemLines renders problems one per line, sorted, for logs and errors.
func ProblemLines(problems []PolicyProblem) []string {
	lines := make([]string, 0, len(problems))
	for _, p := range problems {
		lines = append(lines, p.String())
	}
	slices.Sort(lines)
	return lines
}
