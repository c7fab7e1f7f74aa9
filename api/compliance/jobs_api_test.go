package compliance_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/storage"
)

func TestComplianceConflictAndTenancy(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	ctx := context.Background()
	create := func(authz, typ string) apitest.Reply {
		return b.Call(t, "POST", "/2/compliance/jobs", authz, "application/json", apitest.JSONBody(map[string]any{"type": typ}))
	}
	first := create(b.Bearer, "tweets")
	if first.Status != 200 {
		t.Fatalf("create: %s", first.Raw)
	}
	data := first.Body["data"].(map[string]any)
	if !strings.HasPrefix(data["upload_url"].(string), b.Srv.URL+"/2/compliance/jobs/"+data["id"].(string)+"/upload?") { // the upload gateway
		t.Errorf("upload url %v", data["upload_url"])
	}
	if second := create(b.Bearer, "tweets"); second.Status != 200 {
		t.Fatalf("a created (not in progress) job must not block: %s", second.Raw)
	}
	id, _ := apitest.StrconvID(data["id"].(string))
	if _, started, err := b.DB.StartComplianceJob(ctx, id, time.Now()); err != nil || !started {
		t.Fatalf("start job: %v %v", started, err)
	}
	conflict := create(b.Bearer, "tweets")
	if conflict.Status != 409 || conflict.Body["type"] != apitest.Problems+"conflict" {
		t.Fatalf("conflict: %d %s", conflict.Status, conflict.Raw)
	}
	if r := create(b.Bearer, "users"); r.Status != 200 {
		t.Errorf("other type blocked: %s", r.Raw)
	}
	if r := create(b.OtherBearer, "tweets"); r.Status != 200 {
		t.Errorf("other app blocked: %s", r.Raw)
	}
	listed, _ := b.DB.ListComplianceJobs(ctx, storage.ComplianceFilter{AppID: b.App.ID, Type: "tweets"})
	if len(listed) != 2 {
		t.Errorf("conflict wrote a job: %d tweets jobs", len(listed))
	}
	if r := b.Call(t, "GET", "/2/compliance/jobs/"+data["id"].(string), b.OtherBearer, "", nil); r.Status != 404 {
		t.Errorf("other app reads job: %d", r.Status)
	}
}

func TestFieldsAddToDefaults(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	created := b.Call(t, "POST", "/2/compliance/jobs?compliance_job.fields=id", b.Bearer, "application/json", apitest.JSONBody(map[string]any{"type": "tweets"}))
	if created.Status != 200 {
		t.Fatalf("create: %d %s", created.Status, created.Raw)
	}
	id := created.Body["data"].(map[string]any)["id"].(string)
	defaults := []string{"created_at", "download_expires_at", "download_url", "id", "resumable", "status", "type", "upload_expires_at", "upload_url"}
	for _, target := range []string{
		"/2/compliance/jobs?type=tweets&compliance_job.fields=id,status,upload_url",
		"/2/compliance/jobs?type=tweets&compliance_job.fields=id",
		"/2/compliance/jobs?type=tweets",
		"/2/compliance/jobs/" + id + "?compliance_job.fields=status",
	} {
		r := b.Call(t, "GET", target, b.Bearer, "", nil)
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", target, r.Status, r.Raw)
		}
		job, ok := r.Body["data"].(map[string]any)
		if list, isList := r.Body["data"].([]any); isList && len(list) == 1 {
			job, ok = list[0].(map[string]any)
		}
		if !ok {
			t.Fatalf("%s: no job in %s", target, r.Raw)
		}
		for _, f := range defaults {
			if _, has := job[f]; !has {
				t.Errorf("%s: default field %s missing: %s", target, f, r.Raw)
			}
		}
	}
	if r := b.Call(t, "POST", "/2/compliance/jobs?compliance_job.fields=type", b.Bearer, "application/json", apitest.JSONBody(map[string]any{"type": "users", "name": "n"})); r.Body["data"].(map[string]any)["upload_url"] == nil {
		t.Errorf("create with fields dropped upload_url: %s", r.Raw)
	}
}
