package kube

import (
	"slices"
	"testing"
)

func TestMoveCredentials(t *testing.T) {
	for _, c := range []struct {
		name      string
		args      []string
		want      []string
		wantCreds []Credential
	}{
		// a credential header's value becomes a reference to its variable
		{"header", []string{"--header", "Authorization: Bearer k1", "--model", "m"},
			[]string{"--header", "Authorization: $(SERVEBENCH_HEADER_AUTHORIZATION)", "--model", "m"},
			[]Credential{{Key: "header-authorization", Env: "SERVEBENCH_HEADER_AUTHORIZATION", Value: "Bearer k1"}}},
		// a header that carries no credential stays as given
		{"plain header", []string{"--header=X-Trace: 1"}, []string{"--header=X-Trace: 1"}, nil},
		// a URL's user:password, inline, keeps the rest of the URL
		{"userinfo", []string{"--url=http://u:p%40@h:8000/v1"}, []string{"--url=http://$(SERVEBENCH_URL_USERINFO)@h:8000/v1"},
			[]Credential{{Key: "url-userinfo", Env: "SERVEBENCH_URL_USERINFO", Value: "u:p%40"}}},
		// the same header twice gets a key of its own each time
		{"twice", []string{"--header", "X-Api-Key: a", "--header", "X-Api-Key: b"},
			[]string{"--header", "X-Api-Key: $(SERVEBENCH_HEADER_X_API_KEY)", "--header", "X-Api-Key: $(SERVEBENCH_HEADER_X_API_KEY_2)"},
			[]Credential{{Key: "header-x-api-key", Env: "SERVEBENCH_HEADER_X_API_KEY", Value: "a"}, {Key: "header-x-api-key-2", Env: "SERVEBENCH_HEADER_X_API_KEY_2", Value: "b"}}},
	} {
		got, creds := MoveCredentials(c.args)
		if !slices.Equal(got, c.want) || !slices.Equal(creds, c.wantCreds) {
			t.Errorf("%s: got %q %+v, want %q %+v", c.name, got, creds, c.want, c.wantCreds)
		}
	}
}

func TestDocumentsPrintTheSecretUnlessNamed(t *testing.T) {
	o := Options{Name: "j", Workers: 1, Image: "i", Claim: "c", Credentials: []Credential{{Key: "k", Env: "E", Value: "v"}}}
	docs, printed := Documents(&o)
	if len(docs) != 2 || !printed || o.CredentialsSecret != "j-credentials" {
		t.Errorf("credentials without a named Secret: %d documents, printed %v, secret %q; want 2, true, j-credentials", len(docs), printed, o.CredentialsSecret)
	}
	o.CredentialsSecret = "mine"
	if docs, printed = Documents(&o); len(docs) != 1 || printed {
		t.Errorf("a named Secret: %d documents, printed %v; want the Job alone", len(docs), printed)
	}
}
