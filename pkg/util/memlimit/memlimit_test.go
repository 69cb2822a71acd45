package memlimit

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSoft(t *testing.T) {
	tests := map[string]struct {
		env     map[string]string
		want    int64
		wantSet bool
		wantErr bool
	}{
		"the chart's 512Mi":          {env: map[string]string{EnvContainerLimit: "536870912"}, want: 483183820, wantSet: true},
		"no container limit":         {env: map[string]string{}},
		"GOMEMLIMIT wins":            {env: map[string]string{EnvContainerLimit: "536870912", "GOMEMLIMIT": "300MiB"}},
		"not a number":               {env: map[string]string{EnvContainerLimit: "512Mi"}, wantErr: true},
		"zero is no limit to follow": {env: map[string]string{EnvContainerLimit: "0"}, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, set, err := Soft(func(key string) string { return tc.env[key] })
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want error: %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(struct {
				Limit int64
				Set   bool
			}{tc.want, tc.wantSet}, struct {
				Limit int64
				Set   bool
			}{got, set}); diff != "" {
				t.Errorf("Soft (-want +got):\n%s", diff)
			}
		})
	}
}
