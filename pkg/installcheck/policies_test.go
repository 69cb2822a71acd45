package installcheck

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

const renderedPolicies = `
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: cpm-secret-writes
  labels: {app: cpm}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE", "DELETE"]
      resources: ["secrets"]
  matchConditions:
  - name: requested-by-clusterprofile-manager
    expression: "request.userInfo.username == 'system:serviceaccount:ocm:cpm'"
  validations:
  - expression: "request.operation == 'DELETE' || (object.type == 'Opaque' && has(object.metadata.labels))"
    reason: Forbidden
    message: only copies
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: cpm-secret-writes
spec:
  policyName: cpm-secret-writes
  validationActions: ["Deny"]
`

func mustReadPolicies(t *testing.T, stream string) []PolicyObject {
	t.Helper()
	objects, err := ReadPolicies(strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	return objects
}

func TestReadPolicies(t *testing.T) {
	objects := mustReadPolicies(t, renderedPolicies)
	var got []string
	for _, o := range objects {
		got = append(got, o.String())
	}
	want := []string{"ValidatingAdmissionPolicy cpm-secret-writes", "ValidatingAdmissionPolicyBinding cpm-secret-writes"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects read (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"policyName": "cpm-secret-writes", "validationActions": []any{"Deny"}}, objects[1].Spec); diff != "" {
		t.Errorf("binding spec (-want +got):\n%s", diff)
	}

	empty, err := ReadPolicies(strings.NewReader("\n"))
	if err != nil || len(empty) != 0 {
		t.Errorf("an empty stream (no policy rendered) = %v, %v; want nothing", empty, err)
	}

	for name, stream := range map[string]string{
		"another kind":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
		"another version":  "apiVersion: admissionregistration.k8s.io/v1beta1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: x}\nspec: {}\n",
		"no name":          "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nspec: {}\n",
		"no spec":          "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: x}\n",
		"not YAML at all":  "apiVersion: [\n",
		"a list, not maps": "- a\n- b\n",
	} {
		t.Run(name, func(t *testing.T) {
			if got, err := ReadPolicies(strings.NewReader(stream)); err == nil {
				t.Errorf("ReadPolicies(%q) = %v, want an error", stream, got)
			}
		})
	}
}

// live returns the rendered objects as the API server stores them: with
// its defaults filled in, metadata and a status of its own, then changed by
// alter (kind → spec change).
func live(t *testing.T, alter map[string]func(spec map[string]any)) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, o := range mustReadPolicies(t, renderedPolicies) {
		var spec map[string]any
		data, _ := yaml.Marshal(o.Spec)
		if err := yaml.Unmarshal(data, &spec); err != nil {
			t.Fatal(err)
		}
		if o.Kind == KindPolicy {
			mc := spec["matchConstraints"].(map[string]any)
			mc["matchPolicy"], mc["namespaceSelector"], mc["objectSelector"] = "Equivalent", map[string]any{}, map[string]any{}
			mc["resourceRules"].([]any)[0].(map[string]any)["scope"] = "*"
		}
		if f := alter[o.Kind]; f != nil {
			f(spec)
		}
		out[o.Kind] = map[string]any{"metadata": map[string]any{"name": o.Name, "resourceVersion": "7", "generation": 2.0},
			"spec": spec, "status": map[string]any{"observedGeneration": 2.0}}
	}
	return out
}

func TestCheckPolicies(t *testing.T) {
	expected := mustReadPolicies(t, renderedPolicies)
	notFound := func(kind string) error {
		return apierrors.NewNotFound(schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: resources[kind]}, "cpm-secret-writes")
	}
	cases := map[string]struct {
		alter map[string]func(spec map[string]any)
		// errs are the errors the reads of each kind return.
		errs map[string]error
		want []string
	}{
		"as rendered, with the server's defaults": {},
		"binding deleted": {
			errs: map[string]error{KindPolicyBinding: notFound(KindPolicyBinding)},
			want: []string{"ValidatingAdmissionPolicyBinding cpm-secret-writes: missing"},
		},
		"both deleted": {
			errs: map[string]error{KindPolicy: notFound(KindPolicy), KindPolicyBinding: notFound(KindPolicyBinding)},
			want: []string{"ValidatingAdmissionPolicy cpm-secret-writes: missing", "ValidatingAdmissionPolicyBinding cpm-secret-writes: missing"},
		},
		"binding unreadable": {
			errs: map[string]error{KindPolicyBinding: errors.New("connection refused")},
			want: []string{"ValidatingAdmissionPolicyBinding cpm-secret-writes: cannot be read: connection refused"},
		},
		"binding warns instead of denying": {
			alter: map[string]func(map[string]any){KindPolicyBinding: func(s map[string]any) { s["validationActions"] = []any{"Warn"} }},
			want:  []string{`ValidatingAdmissionPolicyBinding cpm-secret-writes: spec.validationActions[0] is "Warn", want "Deny"`},
		},
		"binding denies and audits": {
			alter: map[string]func(map[string]any){KindPolicyBinding: func(s map[string]any) { s["validationActions"] = []any{"Deny", "Audit"} }},
			want:  []string{"ValidatingAdmissionPolicyBinding cpm-secret-writes: spec.validationActions has 2 items, want 1"},
		},
		"binding points at another policy": {
			alter: map[string]func(map[string]any){KindPolicyBinding: func(s map[string]any) { s["policyName"] = "allow-all" }},
			want:  []string{`ValidatingAdmissionPolicyBinding cpm-secret-writes: spec.policyName is "allow-all", want "cpm-secret-writes"`},
		},
		"binding with a paramRef": {
			alter: map[string]func(map[string]any){KindPolicyBinding: func(s map[string]any) {
				s["paramRef"] = map[string]any{"name": "p", "parameterNotFoundAction": "Allow"}
			}},
			want: []string{`ValidatingAdmissionPolicyBinding cpm-secret-writes: spec.paramRef is set to {"name":"p","parameterNotFoundAction":"Allow"}, which the chart does not render`},
		},
		"binding narrowed to some namespaces": {
			alter: map[string]func(map[string]any){KindPolicyBinding: func(s map[string]any) {
				s["matchResources"] = map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"x": "y"}}}
			}},
			want: []string{`ValidatingAdmissionPolicyBinding cpm-secret-writes: spec.matchResources is set to {"namespaceSelector":{"matchLabels":{"x":"y"}}}, which the chart does not render`},
		},
		"binding with matchResources that match everything": {
			// Not narrower, but not rendered either: the check wants what
			// the chart installs, not a proof of equivalence.
			alter: map[string]func(map[string]any){KindPolicyBinding: func(s map[string]any) {
				s["matchResources"] = map[string]any{"namespaceSelector": map[string]any{}, "objectSelector": map[string]any{}, "matchPolicy": "Equivalent"}
			}},
			want: []string{"ValidatingAdmissionPolicyBinding cpm-secret-writes: spec.matchResources is set, which the chart does not render"},
		},
		"policy ignores its failures": {
			alter: map[string]func(map[string]any){KindPolicy: func(s map[string]any) { s["failurePolicy"] = "Ignore" }},
			want:  []string{`ValidatingAdmissionPolicy cpm-secret-writes: spec.failurePolicy is "Ignore", want "Fail"`},
		},
		"policy validation rewritten": {
			alter: map[string]func(map[string]any){KindPolicy: func(s map[string]any) {
				s["validations"].([]any)[0].(map[string]any)["expression"] = "true"
			}},
			want: []string{"ValidatingAdmissionPolicy cpm-secret-writes: spec.validations[0].expression differs from the chart's"},
		},
		"policy validation dropped, an audit annotation added": {
			alter: map[string]func(map[string]any){KindPolicy: func(s map[string]any) {
				s["validations"] = []any{}
				s["auditAnnotations"] = []any{map[string]any{"key": "k", "valueExpression": "'v'"}}
			}},
			want: []string{"ValidatingAdmissionPolicy cpm-secret-writes: spec.validations has 0 items, want 1; " +
				`spec.auditAnnotations is set to [{"key":"k","valueExpression":"'v'"}], which the chart does not render`},
		},
		"policy matches fewer operations": {
			alter: map[string]func(map[string]any){KindPolicy: func(s map[string]any) {
				s["matchConstraints"].(map[string]any)["resourceRules"].([]any)[0].(map[string]any)["operations"] = []any{"DELETE"}
			}},
			want: []string{"ValidatingAdmissionPolicy cpm-secret-writes: spec.matchConstraints.resourceRules[0].operations has 1 items, want 3"},
		},
		"policy excludes some namespaces": {
			alter: map[string]func(map[string]any){KindPolicy: func(s map[string]any) {
				s["matchConstraints"].(map[string]any)["namespaceSelector"] = map[string]any{"matchLabels": map[string]any{"x": "y"}}
			}},
			want: []string{`ValidatingAdmissionPolicy cpm-secret-writes: spec.matchConstraints.namespaceSelector is set to {"matchLabels":{"x":"y"}}, which the chart does not render`},
		},
		"policy's match condition removed": {
			alter: map[string]func(map[string]any){KindPolicy: func(s map[string]any) { delete(s, "matchConditions") }},
			want:  []string{"ValidatingAdmissionPolicy cpm-secret-writes: spec.matchConditions is missing"},
		},
		"policy's message reworded": {
			alter: map[string]func(map[string]any){KindPolicy: func(s map[string]any) {
				s["validations"].([]any)[0].(map[string]any)["message"] = "nope"
			}},
			want: []string{`ValidatingAdmissionPolicy cpm-secret-writes: spec.validations[0].message is "nope", want "only copies"`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objects := live(t, tc.alter)
			get := func(_ context.Context, kind, name string) (map[string]any, error) {
				if name != "cpm-secret-writes" {
					t.Errorf("read %s %s, which is not expected", kind, name)
				}
				if err := tc.errs[kind]; err != nil {
					return nil, err
				}
				return objects[kind], nil
			}
			got := ProblemLines(CheckPolicies(context.Background(), get, expected))
			if diff := cmp.Diff(append([]string{}, tc.want...), got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSpecDifferencesOfMissingAndMistypedFields(t *testing.T) {
	cases := map[string]struct {
		want, got map[string]any
		diffs     []string
	}{
		"no spec": {want: map[string]any{"a": "b"}, got: nil, diffs: []string{"spec is missing"}},
		"a map became a value": {want: map[string]any{"m": map[string]any{"a": "b"}}, got: map[string]any{"m": "b"},
			diffs: []string{`spec.m is "b", want {"a":"b"}`}},
		"a list became a value": {want: map[string]any{"l": []any{"a"}}, got: map[string]any{"l": "a"},
			diffs: []string{`spec.l is "a", want ["a"]`}},
		"defaulted elsewhere is not a default": {want: map[string]any{"x": map[string]any{}}, got: map[string]any{"x": map[string]any{"matchPolicy": "Equivalent"}},
			diffs: []string{`spec.x.matchPolicy is set to "Equivalent", which the chart does not render`}},
		"a default with another value": {want: map[string]any{"matchConstraints": map[string]any{}},
			got:   map[string]any{"matchConstraints": map[string]any{"matchPolicy": "Exact"}},
			diffs: []string{`spec.matchConstraints.matchPolicy is set to "Exact", which the chart does not render`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.diffs, SpecDifferences(tc.want, tc.got)); diff != "" {
				t.Errorf("differences (-want +got):\n%s", diff)
			}
		})
	}
}
