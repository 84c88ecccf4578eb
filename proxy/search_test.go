package proxy_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// searchHead is the head of a search test's catalog: one upstream and a
// gate for the writes; its tools follow.
const searchHead = `version: 1
server: { name: search }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  up_write: { scopes: [up:write] }
upstreams:
  up: { base_url: "http://127.0.0.1:9" }
`

// A query is read as a user writes it: inflections meet, a phrasal verb
// means its verb (even around its object), a question or a reading verb
// asks to read and a changing verb to write, and "who changed" asks for
// the record of changes.
func TestSearchReadsQueriesAsWritten(t *testing.T) {
	const src = searchHead + `tools:
  - { name: clear_user_sessions, description: Ends every session of a user., kind: write, gate: up_write, request: { upstream: up, method: DELETE, path: "/users/{user_id}/sessions" }, input: { type: object, properties: { user_id: { type: string } }, required: [user_id] } }
  - { name: get_user, description: Returns a user., request: { upstream: up, method: GET, path: "/users/{user_id}" }, input: { type: object, properties: { user_id: { type: string } }, required: [user_id] } }
  - { name: create_user, description: Adds a user., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /users } }
  - { name: update_user, description: Changes a user's profile., kind: write, gate: up_write, request: { upstream: up, method: PUT, path: "/users/{user_id}" }, input: { type: object, properties: { user_id: { type: string } }, required: [user_id] } }
  - { name: list_audit_events, description: Lists the organisation's audit trail., request: { upstream: up, method: GET, path: /audit } }
  - { name: list_workflow_jobs_for_run, description: Lists the jobs of a workflow run., request: { upstream: up, method: GET, path: /runs/jobs } }
  - { name: disable_workflow, description: Stops a workflow from running., kind: write, gate: up_write, request: { upstream: up, method: PUT, path: /workflow/disable } }
  - { name: add_workflow_job, description: Adds a job to a workflow run., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /runs/jobs } }
  - { name: list_keys, description: Lists the keys of a user., request: { upstream: up, method: GET, path: "/users/{user_id}/keys" }, input: { type: object, properties: { user_id: { type: string } }, required: [user_id] } }
  - { name: list_my_keys, description: "Lists the keys of the caller, newest first, a page at a time.", request: { upstream: up, method: GET, path: /users/me/keys }, input: { type: object, properties: { page: { type: integer } } } }
  - { name: request_reviewers, description: Asks people to look at a change., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /changes/reviewers } }
  - { name: list_reviews, description: Lists the reviews of a change and of a change request, request: { upstream: up, method: GET, path: /changes/reviews } }
  - { name: get_issue_comment, description: A comment on an issue., request: { upstream: up, method: GET, path: /issues/comments } }
  - { name: create_issue_comment, description: A comment on an issue., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /issues/comments } }
  - { name: create_issue_label, description: A label on an issue., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /issues/labels } }
  - { name: get_issue_label, description: A label on an issue., request: { upstream: up, method: GET, path: /issues/labels } }
  - { name: list_job_dependencies, description: The jobs that must finish before a job starts., request: { upstream: up, method: GET, path: /jobs/dependencies } }
  - { name: get_run_performance, description: Timings of a run., request: { upstream: up, method: GET, path: /runs/performance } }
`
	core := searchCore(t, "search.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"a phrasal verb around its object", "sign the user out everywhere", "clear_user_sessions"},
		{"an inflection meets its stem", "creating a user", "create_user"},
		{"a phrasal verb means its verb", "turn off the workflow", "disable_workflow"},
		{"a question asks to read", "which jobs were added to the workflow run", "list_workflow_jobs_for_run"},
		{"who changed asks for the record of changes", "who changed the organisation", "list_audit_events"},
		{"my and I ask for the caller's own", "which keys do I have", "list_my_keys"},
		{"a word meets its agent noun", "ask for a review of my change", "request_reviewers"},
		{"an order's verb asks for a write", "reply to an issue", "create_issue_comment"},
		{"a reading verb asks for a read", "print the label of an issue", "get_issue_label"},
		{"only the first word is the verb", "recent jobs of a workflow run", "list_workflow_jobs_for_run"},
		{"a verb meets its noun in -ency", "what does this job depend on", "list_job_dependencies"},
		{"a verb meets its noun in -ance", "how did the last run perform", "get_run_performance"},
	})
}

// Words people use for what an API names otherwise: "every" asks for a
// list, "kinds" for types, HTTPS for TLS, MFA for factors, "clear" for
// delete, "verify" for validate; "healthy", and "up" or "down" in a
// question, for health; "undo" for rollback; "roll back", "run again",
// "try again" and "dry-run" for rollback, retry and test; a word done
// again ("rebuild") that no tool has is the word done; and an e-mail
// address names a user.
func TestSearchKnowsWhatPeopleSayForIt(t *testing.T) {
	const src = searchHead + `tools:
  - { name: get_current_user, description: Returns the authenticated user., request: { upstream: up, method: GET, path: /user } }
  - { name: get_site, description: Returns a site., request: { upstream: up, method: GET, path: "/sites/{site_id}" }, input: { type: object, properties: { site_id: { type: string } }, required: [site_id] } }
  - { name: list_sites, description: Lists sites., request: { upstream: up, method: GET, path: /sites } }
  - { name: create_team, description: Creates a team., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /teams } }
  - { name: add_team_member, description: Adds a member to a team., kind: write, gate: up_write, request: { upstream: up, method: POST, path: "/teams/{team}/members" }, input: { type: object, properties: { team: { type: string } }, required: [team] } }
  - { name: list_hooks, description: Lists the hooks of a site., request: { upstream: up, method: GET, path: /hooks } }
  - { name: list_hook_types, description: Lists the hooks one may add., request: { upstream: up, method: GET, path: /hooks/types } }
  - { name: get_certificate, description: Returns the certificate of a site., request: { upstream: up, method: GET, path: /certificate } }
  - { name: renew_certificate, description: Renews the certificate of a site., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /certificate/renew } }
  - { name: provision_tls_certificate, description: Orders a certificate for a site., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /tls } }
  - { name: list_factors, description: Lists what a user signs in with besides a password., request: { upstream: up, method: GET, path: /factors } }
  - { name: list_devices, description: Lists a user's devices., request: { upstream: up, method: GET, path: /devices } }
  - { name: update_score, description: Sets the reputation score of an address., kind: write, gate: up_write, request: { upstream: up, method: PUT, path: /scores } }
  - { name: destroy_score, description: Forgets the reputation score of an address., kind: write, gate: up_write, request: { upstream: up, method: DELETE, path: /scores } }
  - { name: get_settings, description: Returns the settings., request: { upstream: up, method: GET, path: /settings } }
  - { name: validate_settings, description: Reports what is wrong with the settings., request: { upstream: up, method: POST, path: /settings/validate } }
  - { name: get_health, description: Reports the service., request: { upstream: up, method: GET, path: /health } }
  - { name: get_service, description: Returns the service's settings., request: { upstream: up, method: GET, path: /service } }
  - { name: update_deploy, description: Changes a deploy., kind: write, gate: up_write, request: { upstream: up, method: PATCH, path: /deploys } }
  - { name: rollback_deploy, description: Makes the previous deploy live., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /deploys/rollback } }
  - { name: create_job, description: Starts a job., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /jobs } }
  - { name: retry_job, description: Starts a failed job anew., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /jobs/retry } }
  - { name: trigger_build, description: Starts a build., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /builds } }
  - { name: run_policy, description: Runs a policy., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /policies/run } }
  - { name: test_policy, description: Evaluates a policy for a user without enforcing it., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /policies/test } }
  - { name: create_user, description: Creates a user., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /users } }
  - { name: create_entry, description: Creates an entry., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /entries } }
  - { name: create_version, description: Records a version of an entry., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /versions } }
  - { name: list_runners, description: Lists the runners., request: { upstream: up, method: GET, path: /runners } }
  - { name: delete_runner, description: Removes a runner., kind: write, gate: up_write, request: { upstream: up, method: DELETE, path: /runners } }
  - { name: create_registration_token, description: Mints a token for a new runner., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /runners/registration-token } }
  - { name: get_api_token, description: Returns an API token., request: { upstream: up, method: GET, path: "/tokens/{id}" }, input: { type: object, properties: { id: { type: string } }, required: [id] } }
  - { name: create_api_token, description: Creates an API token., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /tokens } }
  - { name: get_deploy_key, description: Returns a deploy key., request: { upstream: up, method: GET, path: "/keys/{id}" }, input: { type: object, properties: { id: { type: string } }, required: [id] } }
  - { name: create_deploy_key, description: Creates a deploy key., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /keys } }
  - { name: list_clusters, description: Lists the clusters., request: { upstream: up, method: GET, path: /clusters } }
  - { name: create_cluster, description: Provisions a cluster., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /clusters } }
  - { name: get_endpoint, description: Returns an endpoint., request: { upstream: up, method: GET, path: /endpoint } }
  - { name: start_endpoint, description: Starts an endpoint., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /endpoint/start } }
  - { name: list_branches, description: Lists the branches., request: { upstream: up, method: GET, path: /branches } }
  - { name: get_consumption_per_branch, description: Returns the compute each branch consumed., request: { upstream: up, method: GET, path: /consumption } }
  - { name: restore_branch, description: Resets a branch to a point in time., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /branches/restore } }
  - { name: list_operations, description: Lists what the service did in the background., request: { upstream: up, method: GET, path: /operations } }
  - { name: get_issue, description: Returns an issue., request: { upstream: up, method: GET, path: /issue } }
  - { name: create_remote_link, description: Links an issue to something outside., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /issue/remotelink } }
  - { name: set_banner, description: Shows a message to everyone., kind: write, gate: up_write, request: { upstream: up, method: PUT, path: /banner } }
  - { name: get_field, description: Returns a custom field., request: { upstream: up, method: GET, path: /field } }
  - { name: restore_field, description: Brings a deleted custom field back., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /field/restore } }
  - { name: get_assignee, description: Returns who an issue is with., request: { upstream: up, method: GET, path: /issue/assignee } }
  - { name: assign_issue, description: Gives an issue to someone., kind: write, gate: up_write, request: { upstream: up, method: PUT, path: /issue/assignee } }
  - { name: get_comment, description: Returns a comment., request: { upstream: up, method: GET, path: /comment } }
  - { name: add_comment, description: Adds a comment., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /comment } }
  - { name: get_filter, description: Returns a filter., request: { upstream: up, method: GET, path: /filter } }
  - { name: create_filter, description: Creates a filter., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /filter } }
  - { name: get_server_info, description: Returns the build of the server., request: { upstream: up, method: GET, path: /serverInfo } }
  - { name: get_job_info, description: Returns a job., request: { upstream: up, method: GET, path: /jobs/info } }
  - { name: get_release, description: Returns a version of a project., request: { upstream: up, method: GET, path: /version } }
`
	core := searchCore(t, "vocabulary.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"every asks for a list", "show me every site", "list_sites"},
		{"verify is validate", "verify the settings", "validate_settings"},
		{"an e-mail address names someone", "invite jane.doe@example.com to the web team", "add_team_member"},
		{"kinds are types", "what kinds of hooks are there", "list_hook_types"},
		{"HTTPS is TLS", "give my site an HTTPS certificate", "provision_tls_certificate"},
		{"MFA is a factor", "which MFA does this user have", "list_factors"},
		{"clear deletes", "clear the score of this address", "destroy_score"},
		{"healthy meets health", "is the service healthy", "get_health"},
		{"up asks for health", "is the service up?", "get_health"},
		{"down asks for health", "is the service down", "get_health"},
		{"roll back around its object", "roll the broken deploy back", "rollback_deploy"},
		{"run again is a retry", "run the nightly job again", "retry_job"},
		{"try again is a retry", "try the nightly job again", "retry_job"},
		{"undo is a rollback", "undo the last deploy", "rollback_deploy"},
		{"a dry run is a test", "dry-run the policy", "test_policy"},
		{"a rebuild is a build", "a fresh rebuild", "trigger_build"},
		{"a new hire is a user", "set up the new hire", "create_user"},
		{"a draft is a version", "save a draft", "create_version"},
		{"register meets registration", "register a runner", "create_registration_token"},
		{"getting a new token creates one", "get a new API token", "create_api_token"},
		{"getting the token reads it", "get the API token of this app", "get_api_token"},
		{"getting a key may read it", "get a deploy key", "get_deploy_key"},
		{"getting another key creates one", "get another deploy key", "create_deploy_key"},
		{"spin up creates", "spin up a cluster", "create_cluster"},
		{"wake up starts", "wake the endpoint up", "start_endpoint"},
		{"usage is consumption", "usage by branch", "get_consumption_per_branch"},
		{"background jobs are operations", "show the background jobs", "list_operations"},
		{"rolling back a branch restores it", "roll the branch back to yesterday", "restore_branch"},
		{"a URL is a link", "attach a URL", "create_remote_link"},
		{"a notice is a banner", "a notice about Saturday's maintenance", "set_banner"},
		{"getting back restores", "get the custom field back", "restore_field"},
		{"handing over assigns", "hand the issue over to Priya", "assign_issue"},
		{"leaving a comment adds one", "leave a comment", "add_comment"},
		{"saving a filter creates one", "save a filter", "create_filter"},
		{"which version is running asks the server", "which version is running?", "get_server_info"},
		{"what runs a version asks for what runs it", "are any runners running version 15?", "list_runners"},
	})
}

// Shops, payments and payroll have words of their own that users say
// otherwise: a menu is a catalog, stock is inventory, a chargeback is a
// dispute.
func TestSearchKnowsWhatShopsSay(t *testing.T) {
	const src = searchHead + `tools:
  - { name: list_customers, description: Lists the customers., request: { upstream: up, method: GET, path: /customers } }
  - { name: create_order, description: Creates an order., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /orders } }
  - { name: pay_order, description: Pays for an order., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /orders/pay } }
  - { name: list_payments, description: Lists the payments., request: { upstream: up, method: GET, path: /payments } }
  - { name: upsert_catalog_object, description: Puts an object into the catalog., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /catalog/object } }
  - { name: retrieve_inventory_count, description: Returns the inventory count of an object., request: { upstream: up, method: GET, path: /inventory/count } }
  - { name: list_customer_segments, description: Lists the segments customers fall in., request: { upstream: up, method: GET, path: /customers/segments } }
  - { name: search_availability, description: Searches availability for a booking., request: { upstream: up, method: POST, path: /bookings/availability/search } }
  - { name: list_invoices, description: Lists the invoices., request: { upstream: up, method: GET, path: /invoices } }
  - { name: create_invoice, description: Creates an invoice for an order., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /invoices } }
  - { name: get_product, description: Returns a product., request: { upstream: up, method: GET, path: /product } }
  - { name: delete_product, description: Removes a product., kind: write, gate: up_write, request: { upstream: up, method: DELETE, path: /product } }
  - { name: upsert_product, description: Stores a product., kind: write, gate: up_write, request: { upstream: up, method: PUT, path: /product } }
  - { name: list_subscriptions, description: Lists the subscriptions., request: { upstream: up, method: GET, path: /subscriptions } }
  - { name: update_wage_setting, description: Updates the wage setting of a team member., kind: write, gate: up_write, request: { upstream: up, method: PUT, path: /team/wage } }
  - { name: create_terminal_checkout, description: Sends a checkout to a terminal., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /terminals/checkouts } }
  - { name: list_disputes, description: Lists the disputes., request: { upstream: up, method: GET, path: /disputes } }
  - { name: create_dispute_evidence_text, description: Uploads text evidence for a dispute., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /disputes/evidence } }
  - { name: update_location, description: Updates a location., kind: write, gate: up_write, request: { upstream: up, method: PUT, path: /locations } }
  - { name: list_team_members, description: Lists the team members., request: { upstream: up, method: GET, path: /team } }
  - { name: list_catalog, description: Lists what is for sale., request: { upstream: up, method: GET, path: /catalog } }
  - { name: create_dispute, description: Opens a dispute., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /disputes } }
  - { name: list_locations, description: Lists the locations., request: { upstream: up, method: GET, path: /locations } }
`
	core := searchCore(t, "shop.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"a menu is a catalog", "what is on the menu", "list_catalog"},
		{"stock is inventory", "stock levels of the mugs", "retrieve_inventory_count"},
		{"an audience is a segment", "which audiences do we have", "list_customer_segments"},
		{"a slot is availability", "any free slots on Tuesday", "search_availability"},
		{"to bill is to write", "bill Kim", "create_invoice"},
		{"adding is upserting", "add a product", "upsert_product"},
		{"a membership is a subscription", "list the memberships", "list_subscriptions"},
		{"a salary is a wage", "raise Kim's salary", "update_wage_setting"},
		{"a card reader is a terminal", "push the charge to the card reader", "create_terminal_checkout"},
		{"a chargeback is a dispute", "show the chargebacks", "list_disputes"},
		{"proof is evidence", "add proof to the dispute", "create_dispute_evidence_text"},
		{"a shop is a location", "list our shops", "list_locations"},
	})
}

// Project tools have words of their own that users say otherwise: a
// to-do is a task, a child is a subtask, an objective is a goal.
func TestSearchKnowsWhatTeamsSay(t *testing.T) {
	const src = searchHead + `tools:
  - { name: create_project, description: Creates a project., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /projects } }
  - { name: get_project, description: Returns a project., request: { upstream: up, method: GET, path: /project } }
  - { name: list_tasks, description: Lists the tasks., request: { upstream: up, method: GET, path: /tasks } }
  - { name: create_task, description: Creates a task., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /tasks } }
  - { name: delete_task, description: Deletes a task., kind: write, gate: up_write, request: { upstream: up, method: DELETE, path: /tasks } }
  - { name: get_subtasks_for_task, description: Returns the subtasks of a task., request: { upstream: up, method: GET, path: /tasks/subtasks } }
  - { name: add_followers_for_task, description: Adds followers to a task., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /tasks/followers } }
  - { name: add_tag_for_task, description: Adds a tag to a task., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /tasks/tags } }
  - { name: duplicate_project, description: Duplicates a project., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /projects/duplicate } }
  - { name: get_project_brief, description: Returns the brief of a project., request: { upstream: up, method: GET, path: /projects/brief } }
  - { name: create_goal, description: Creates a goal., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /goals } }
  - { name: create_enum_option, description: Adds an enum option to a custom field., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /fields/options } }
  - { name: typeahead, description: Returns the objects whose names start with a prefix., request: { upstream: up, method: GET, path: /typeahead } }
  - { name: get_time_periods, description: Returns the time periods., request: { upstream: up, method: GET, path: /periods } }
  - { name: get_favorites, description: Returns the favorites of a user., request: { upstream: up, method: GET, path: /favorites } }
`
	core := searchCore(t, "team.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"a to-do is a task", "create a to-do", "create_task"},
		{"a child is a subtask", "children of the task", "get_subtasks_for_task"},
		{"getting rid deletes", "get rid of that task", "delete_task"},
		{"looping someone in adds a follower", "loop Sam in on the task", "add_followers_for_task"},
		{"a label is a tag", "label the task urgent", "add_tag_for_task"},
		{"a copy is a duplicate", "make a copy of the project", "duplicate_project"},
		{"an overview is a brief", "show the overview of the project", "get_project_brief"},
		{"an objective is a goal", "create a company objective", "create_goal"},
		{"a choice is an option", "add a choice", "create_enum_option"},
		{"a dropdown is an enum", "add a dropdown", "create_enum_option"},
		{"autocomplete is typeahead", "autocomplete a user", "typeahead"},
		{"a quarter is a period", "get the quarters", "get_time_periods"},
		{"starred is a favorite", "show what I starred", "get_favorites"},
	})
}

// Cloud operators name what they run in words of their own: a datacenter
// is a region, a disk is a volume, "email me when" sets up an alert, and a
// host name names a domain.
func TestSearchKnowsWhatOperatorsSay(t *testing.T) {
	const src = searchHead + `tools:
  - { name: list_sizes, description: Lists the sizes a server may have., request: { upstream: up, method: GET, path: /sizes } }
  - { name: list_regions, description: Lists the regions where servers can be created., request: { upstream: up, method: GET, path: /regions } }
  - { name: list_volumes, description: Lists the block storage volumes., request: { upstream: up, method: GET, path: /volumes } }
  - { name: list_snapshots, description: Lists the snapshots of a server., request: { upstream: up, method: GET, path: /snapshots } }
  - { name: list_alert_policies, description: Lists the alert policies., request: { upstream: up, method: GET, path: /alerts } }
  - { name: create_alert_policy, description: Creates an alert policy., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /alerts } }
  - { name: get_cpu_metrics, description: Returns the CPU metrics of a server., request: { upstream: up, method: GET, path: /metrics/cpu } }
  - { name: run_check, description: Runs a check., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /check/run } }
  - { name: create_check, description: Creates an uptime check of an endpoint., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /checks } }
  - { name: list_sites, description: Lists the sites., request: { upstream: up, method: GET, path: /sites } }
  - { name: list_domain_records, description: Lists the records of a domain., request: { upstream: up, method: GET, path: /records } }
  - { name: list_org_members, description: Lists the members of the organization., request: { upstream: up, method: GET, path: /org/members } }
  - { name: create_certificate, description: Issues a certificate., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /certificates } }
  - { name: get_certificate, description: Returns a certificate., request: { upstream: up, method: GET, path: "/certificates/{id}" }, input: { type: object, properties: { id: { type: string } }, required: [id] } }
`
	core := searchCore(t, "ops.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"a datacenter is a region", "which datacenters are there", "list_regions"},
		{"a disk is a volume", "show every disk", "list_volumes"},
		{"email me when sets up an alert", "email me when the CPU of a server is over 90%", "create_alert_policy"},
		{"down in a condition asks for a check", "a check for when it goes down", "create_check"},
		{"page us if sets up an alert", "page us if the site goes down", "create_alert_policy"},
		{"a host name is a domain", "the DNS of example.org", "list_domain_records"},
		{"a host name is no one thing asked about", "certificate for shop.example.com", "create_certificate"},
	})
}

// What an API does by updating a thing is asked for by what changes: "turn
// the flag on" is PATCH /flags/{key}. A name joined by hyphens says less
// than the query's own words ("new-ui" asks to create nothing), and the
// "me" of "show me" is whom the answer is for.
func TestSearchReadsChangesNamesAndShowMe(t *testing.T) {
	const src = searchHead + `tools:
  - { name: delete_flag, description: Deletes a flag., kind: write, gate: up_write, request: { upstream: up, method: DELETE, path: "/flags/{key}" }, input: { type: object, properties: { key: { type: string } }, required: [key] } }
  - { name: patch_flag, description: Partially updates a flag., kind: write, gate: up_write, request: { upstream: up, method: PATCH, path: "/flags/{key}" }, input: { type: object, properties: { key: { type: string } }, required: [key] } }
  - { name: create_flag, description: Creates a new flag for a new UI., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /flags } }
  - { name: create_project_role, description: Creates a new project role for new members of new projects., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /roles } }
  - { name: create_project, description: Creates a project based on a template., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /projects } }
  - { name: get_me, description: Returns the current member., request: { upstream: up, method: GET, path: /members/me } }
  - name: get_flag
    description: Returns a flag.
    request: { upstream: up, method: GET, path: "/flags/{key}" }
    input: { type: object, properties: { key: { type: string } }, required: [key] }
    output_schema: { type: object, properties: { variations: { type: array } } }
`
	core := searchCore(t, "flags.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"turning on updates", "turn the flag on", "patch_flag"},
		{"a name's words count less", "change the new-ui flag", "patch_flag"},
		{"new counts less than what is new", "set up a new project", "create_project"},
		{"show me is not about me", "show me the variations", "get_flag"},
		{"where do I find is not about me", "where do I find the variations", "get_flag"},
		{"what can I pick is not about me", "what variations can I pick", "get_flag"},
		{"what can I access is about me", "what can I still access", "get_me"},
		{"do I have is about me", "what do I have", "get_me"},
	})
}

// Meeting software names what people do in meetings: who joined is a
// participant, signing up registers, a room's problem is an issue, its
// hardware its devices; and a phrasal verb counts in a tool's own words
// ("sign in sign out activities") as in a query, in any of its forms
// ("signed up").
func TestSearchKnowsWhatMeetingsSay(t *testing.T) {
	const src = searchHead + `tools:
  - { name: list_channel_members, description: Lists the members who joined a channel., request: { upstream: up, method: GET, path: /channels/members } }
  - { name: list_meeting_participants, description: Lists the participants of a past meeting., request: { upstream: up, method: GET, path: /meetings/participants } }
  - { name: list_room_devices, description: Lists the devices of a room., request: { upstream: up, method: GET, path: /rooms/devices } }
  - { name: list_rooms, description: Lists the rooms and what each has., request: { upstream: up, method: GET, path: /rooms } }
  - { name: list_room_issues, description: Lists the issues a room reports., request: { upstream: up, method: GET, path: /rooms/issues } }
  - { name: list_account_activities, description: Lists the activities of the account., request: { upstream: up, method: GET, path: /activities } }
  - { name: report_sign_in_sign_out_activities, description: Reports the activities of the account., request: { upstream: up, method: GET, path: /report/activities } }
  - { name: list_sign_events, description: Lists the events of signed documents., request: { upstream: up, method: GET, path: /sign/events } }
  - { name: list_webinar_registrants, description: Lists who registered for a webinar., request: { upstream: up, method: GET, path: /webinars/registrants } }
  - { name: add_webinar_registrant, description: Registers someone for a webinar., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /webinars/registrants } }
  - { name: add_batch_webinar_registrants, description: Registers up to 30 people for a webinar., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /webinars/batch_registrants } }
  - { name: list_webinar_panelists, description: Lists the panelists of a webinar who signed the agreement., request: { upstream: up, method: GET, path: /webinars/panelists } }
`
	core := searchCore(t, "meetings.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"who joined asks for participants", "who joined yesterday?", "list_meeting_participants"},
		{"hardware is devices", "what hardware is in the room", "list_room_devices"},
		{"a problem is an issue", "rooms with problems", "list_room_issues"},
		{"a phrase in a tool's name", "when did people log in", "report_sign_in_sign_out_activities"},
		{"a phrase in any form", "list the people signed up for the webinar", "list_webinar_registrants"},
		{"in one go is a batch", "register these people for the webinar in one go", "add_batch_webinar_registrants"},
		{"at once is a batch", "register them all at once for the webinar", "add_batch_webinar_registrants"},
	})
}

// People name a file by what it holds (a spreadsheet, a deck), call
// comments feedback, and say what not to do ("don't delete anything"),
// which is not asked for; what a later clause asks for is.
func TestSearchKnowsWhatFilesSay(t *testing.T) {
	const src = searchHead + `tools:
  - { name: list_task_comments, description: Lists the comments on a task., request: { upstream: up, method: GET, path: /tasks/comments } }
  - { name: list_file_comments, description: Lists the comments on a file., request: { upstream: up, method: GET, path: /files/comments } }
  - { name: get_task, description: Returns a task., request: { upstream: up, method: GET, path: /task } }
  - { name: delete_user, description: Deletes a user and everything they own., kind: write, gate: up_write, request: { upstream: up, method: DELETE, path: /users } }
  - { name: update_user, description: Updates a user's status., kind: write, gate: up_write, request: { upstream: up, method: PATCH, path: /users } }
`
	core := searchCore(t, "files.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"a spreadsheet is a file", "comments on the budget spreadsheet", "list_file_comments"},
		{"feedback is a comment", "feedback on the task", "list_task_comments"},
		{"what not to do is not asked for", "suspend the user, don't delete anything", "update_user"},
		{"a negator ends with its clause", "we don't need it anymore, delete the user", "delete_user"},
		{"a negator that ends its clause reaches the next", "suspend the user but don't, please, delete anything", "update_user"},
		{"an ellipsis after a negator", "suspend the user. don't... delete anything", "update_user"},
		{"a negator before a colon", "suspend the user, never: delete", "update_user"},
	})
}

// A board's words: a deadline is a due date, desc is a description, a
// workspace is an organisation; shift and drag move; "put on" adds,
// "take off" removes and "look up" searches; quoted words are a name's,
// so "put 'update changelog' on" asks for no update.
func TestSearchKnowsWhatBoardsSay(t *testing.T) {
	const src = searchHead + `tools:
  - { name: update_card_due, description: Sets a card's due date., kind: write, gate: up_write, request: { upstream: up, method: PUT, path: /cards/due } }
  - { name: update_card_name, description: Sets a card's name., kind: write, gate: up_write, request: { upstream: up, method: PUT, path: /cards/name } }
  - { name: update_card_desc, description: Sets a card's desc., kind: write, gate: up_write, request: { upstream: up, method: PUT, path: /cards/desc } }
  - { name: add_organization, description: Creates an organization., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /organizations } }
  - { name: add_board, description: Creates a board., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /boards } }
  - { name: add_list_move_all_cards, description: Moves all cards of a list to another list., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /lists/moveAllCards } }
  - { name: get_list_cards, description: Lists the cards of a list., request: { upstream: up, method: GET, path: /lists/cards } }
  - { name: add_checklist_check_item, description: Adds a check item to a checklist., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /checklists/checkItems } }
  - { name: update_checklist, description: Updates a checklist., kind: write, gate: up_write, request: { upstream: up, method: PUT, path: /checklists } }
  - { name: get_search_members, description: Searches for members., request: { upstream: up, method: GET, path: /search/members } }
  - { name: get_member, description: Returns a member., request: { upstream: up, method: GET, path: /members } }
  - { name: delete_card_member, description: Removes a member from a card., kind: write, gate: up_write, request: { upstream: up, method: DELETE, path: /cards/idMembers } }
  - { name: get_card_members, description: Lists the members of a card., request: { upstream: up, method: GET, path: /cards/members } }
`
	core := searchCore(t, "boards.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"a deadline is a due date", "push the deadline on the invoice card to Friday", "update_card_due"},
		{"desc is a description", "paste the repro steps into the description of the crash card", "update_card_desc"},
		{"a workspace is an organisation", "set up a new workspace for the Berlin office", "add_organization"},
		{"shift moves", "shift the cards of the list", "add_list_move_all_cards"},
		{"put on adds; quoted words are a name", "put 'update changelog' on the release checklist", "add_checklist_check_item"},
		{"look up searches", "look up people named Alex", "get_search_members"},
		{"take off removes", "take me off the vendor card", "delete_card_member"},
	})
}

// "Whenever" asks for a webhook, unless it is the caller who is to be
// told (an alert); "make bob an admin" changes bob, where "make a new
// private board" makes one.
func TestSearchReadsWheneverAndMakeInto(t *testing.T) {
	const src = searchHead + `tools:
  - { name: list_pushes, description: Lists the pushes to a repository., request: { upstream: up, method: GET, path: /repos/pushes } }
  - { name: create_repo_webhook, description: Creates a webhook for a repository., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /repos/hooks } }
  - { name: create_alert_rule, description: Creates an alert rule., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /alerts } }
  - { name: create_member, description: Adds a member to the team., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /members } }
  - { name: update_member, description: Updates a member's role on the team., kind: write, gate: up_write, request: { upstream: up, method: PUT, path: /members/role } }
  - { name: create_board, description: Creates a board., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /boards } }
  - { name: update_board, description: Updates a board's visibility., kind: write, gate: up_write, request: { upstream: up, method: PUT, path: /boards/visibility } }
`
	core := searchCore(t, "events.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"whenever asks for a webhook", "ping our chat whenever someone pushes to the repository", "create_repo_webhook"},
		{"every time does too", "call our bot every time a push lands", "create_repo_webhook"},
		{"telling the caller is an alert", "email me whenever someone pushes", "create_alert_rule"},
		{"make someone something changes them", "make bob a team admin", "update_member"},
		{"make something private changes it", "make the roadmap board private", "update_board"},
		{"make a new one creates it", "make a new private board", "create_board"},
	})
}

// "Kick off the build" starts it, "kick bob off the team" removes him;
// replicate copies; spam is abuse; a cost is a price; "give me all our"
// reads, where "give" alone grants.
func TestSearchKnowsWhatMailersSay(t *testing.T) {
	const src = searchHead + `tools:
  - { name: trigger_team_build, description: Starts a build of the team's site., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /teams/builds } }
  - { name: remove_team_member, description: Removes a member from the team., kind: write, gate: up_write, request: { upstream: up, method: DELETE, path: /teams/members } }
  - { name: replicate_campaign, description: Replicates a campaign., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /campaigns/replicate } }
  - { name: create_campaign, description: Creates a campaign email., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /campaigns } }
  - { name: list_abuse_reports, description: Lists the abuse reports of a list., request: { upstream: up, method: GET, path: /lists/abuse-reports } }
  - { name: list_list_members, description: Lists the members of a list., request: { upstream: up, method: GET, path: /lists/members } }
  - { name: check_domain_price, description: Checks the price of a domain., request: { upstream: up, method: GET, path: /domains/price } }
  - { name: get_domain, description: Returns a domain., request: { upstream: up, method: GET, path: /domains/one } }
  - { name: list_automations, description: Lists the automations., request: { upstream: up, method: GET, path: /automations } }
  - { name: grant_automation_access, description: Gives a user access to the automations., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /automations/access } }
`
	core := searchCore(t, "mailers.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"kick off starts", "kick off the team build", "trigger_team_build"},
		{"kick someone off removes", "kick bob off the team, he left", "remove_team_member"},
		{"replicate copies", "make a copy of last month's campaign", "replicate_campaign"},
		{"spam is abuse", "any spam complaints on the newsletter list lately", "list_abuse_reports"},
		{"a cost is a price", "how much would it cost to register coolstartup.dev", "check_domain_price"},
		{"give me all our reads", "give me all our automations", "list_automations"},
	})
}

// A quoted name's words ask for nothing of their own: no phrasal verb
// ("take out", "look up") and no "make" inside it.
func TestSearchReadsNoVerbInAQuotedName(t *testing.T) {
	const src = searchHead + `tools:
  - { name: create_task, description: Creates a task., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /tasks } }
  - { name: delete_task, description: Deletes a task., kind: write, gate: up_write, request: { upstream: up, method: DELETE, path: /tasks/task } }
  - { name: update_task, description: Updates a task., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /tasks/task/update } }
  - { name: list_tasks, description: Lists the active tasks., request: { upstream: up, method: GET, path: /tasks } }
  - { name: get_task, description: Returns a task., request: { upstream: up, method: GET, path: /tasks/task } }
  - { name: search_tasks, description: Searches tasks., request: { upstream: up, method: GET, path: /tasks/search } }
  - { name: register_user, description: Registers a user., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /users } }
`
	wantFirsts(t, searchCore(t, "tasks.yaml", src), []firstCase{
		{"take out in a name", `add "take out the trash" to my tasks`, "create_task"},
		{"look up in a name", `add a task "look up flights to Rome"`, "create_task"},
		{"make in a name", `add a task "make Bob an admin"`, "create_task"},
	})
}

// "Every time" that is no event asks for no webhook: a time entry is a
// thing, "any time next week" a time to come, and an order to read
// reads what happened ("show me every time the deploy failed").
func TestSearchReadsEveryTimeThatIsNoEvent(t *testing.T) {
	const hours = searchHead + `tools:
  - { name: list_time_entries, description: "Lists the time entries, filtered by user, client, project or date.", request: { upstream: up, method: GET, path: /time_entries } }
  - { name: create_time_entry, description: Creates a time entry for a project and task., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /time_entries } }
  - { name: create_project, description: Creates a project., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /projects } }
`
	wantFirsts(t, searchCore(t, "hours.yaml", hours), []firstCase{
		{"a time entry is a thing", "every time entry for the Acme project this week", "list_time_entries"},
		{"listing reads", "list every time entry for the Acme project", "list_time_entries"},
	})
	const ci = searchHead + `tools:
  - { name: list_runs, description: Lists the workflow runs of a repository., request: { upstream: up, method: GET, path: /runs } }
  - { name: list_test_results, description: "Lists the test results of a run, failed and passed.", request: { upstream: up, method: GET, path: /runs/tests } }
  - { name: rerun_failed_jobs, description: Re-runs the failed jobs of a workflow run., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /runs/rerun } }
  - { name: create_webhook, description: Creates a webhook for a repository., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /hooks } }
  - { name: list_deployments, description: Lists the deployments of a repository., request: { upstream: up, method: GET, path: /deployments } }
  - { name: create_deployment, description: Creates a deployment., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /deployments } }
  - { name: list_deployment_statuses, description: "Lists the statuses of a deployment: success, failure, error.", request: { upstream: up, method: GET, path: /deployments/statuses } }
`
	wantFirsts(t, searchCore(t, "ci.yaml", ci), []firstCase{
		{"showing what happened reads", "show me every time the deploy failed this week", "list_deployment_statuses"},
		{"what fails every time is read", "list the tests that fail every time", "list_test_results"},
		{"an event still asks for a webhook", "post to the chat every time someone pushes", "create_webhook"},
		{"what is got each time is sent", "get a message in the chat every time someone pushes", "create_webhook"},
	})
	const calendar = searchHead + `tools:
  - { name: create_event, description: Creates a calendar event or meeting., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /events } }
  - { name: list_events, description: Lists the events of a calendar., request: { upstream: up, method: GET, path: /events } }
  - { name: create_webhook_subscription, description: Creates a webhook subscription for scheduling events., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /webhook_subscriptions } }
`
	wantFirsts(t, searchCore(t, "calendar.yaml", calendar), []firstCase{
		{"any time next week is a time", "book a meeting with Ana any time next week", "create_event"},
	})
}

// "Make" that makes something stays a create: "make me a new API key"
// makes it for someone, "make two private boards" counts what it makes,
// "make backups of a database" makes them of another; "make the api
// repo public" still changes it.
func TestSearchReadsMakeForSomeone(t *testing.T) {
	const src = searchHead + `tools:
  - { name: create_api_key, description: Creates an API key for the current user., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /api_keys } }
  - { name: update_api_key, description: Updates an API key's name or scopes., kind: write, gate: up_write, request: { upstream: up, method: PATCH, path: /api_keys/key } }
  - { name: create_board, description: Creates a board., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /boards } }
  - { name: update_board, description: Updates a board's name or visibility., kind: write, gate: up_write, request: { upstream: up, method: PUT, path: /boards/board } }
  - { name: create_channel, description: Creates a channel., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /channels } }
  - { name: update_channel, description: Updates a channel., kind: write, gate: up_write, request: { upstream: up, method: PATCH, path: /channels/channel } }
  - { name: create_repo, description: Creates a repository., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /repos } }
  - { name: update_repo, description: "Updates a repository's settings, such as its visibility.", kind: write, gate: up_write, request: { upstream: up, method: PATCH, path: /repos/repo } }
  - { name: create_backup, description: Creates a backup of a database., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /databases/backups } }
  - { name: update_database, description: Updates a database., kind: write, gate: up_write, request: { upstream: up, method: PATCH, path: /databases/database } }
`
	core := searchCore(t, "make.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"made for me", "make me a new API key", "create_api_key"},
		{"made for a team", "make the team a new channel", "create_channel"},
		{"a count of boards", "make two private boards for the launch", "create_board"},
		{"a number of repos", "make 3 private repos for the interns", "create_repo"},
		{"made of a database", "make backups of a database", "create_backup"},
		{"a repo made public", "make the api repo public", "update_repo"},
		{"boards made private", "make both boards private", "update_board"},
	})
}

// When more tools match than the ranking keeps for its final ordering
// (rerankDepth, 50), the best are the ones kept, wherever they come: the
// tool that matches every word comes first in the catalog, the one that
// matches two comes last, after 120 that match one.
func TestSearchKeepsTheBestOfManyMatches(t *testing.T) {
	var b strings.Builder
	b.WriteString(`version: 1
server: { name: many }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
upstreams:
  up: { base_url: "http://127.0.0.1:9" }
tools:
  - { name: drain_queue_backlog, description: Drains the backlog of the queue., request: { upstream: up, method: GET, path: /drain } }
`)
	for i := range 120 {
		fmt.Fprintf(&b, "  - { name: queue_report_%d, description: A report on the queue., request: { upstream: up, method: GET, path: /r%d } }\n", i, i)
	}
	b.WriteString("  - { name: queue_backlog_size, description: The size of the backlog of the queue., request: { upstream: up, method: GET, path: /size } }\n")
	core := searchCore(t, "many.yaml", b.String())
	for _, limit := range []int{2, 5, proxy.MaxSearchLimit} {
		found, err := core.SearchCatalog(proxy.SearchQuery{Query: "queue backlog drain", Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, l := range found {
			names = append(names, l.Tool.Name)
		}
		if len(names) != limit || names[0] != "drain_queue_backlog" || names[1] != "queue_backlog_size" {
			t.Errorf("limit %d found %v, want %d tools, drain_queue_backlog then queue_backlog_size", limit, names, limit)
		}
	}
}

// A word no visible tool uses may name the caller's own data, which an
// API that stores what its users define calls an item, an entry or a row:
// "remove an article" is delete_item, not the delete_* tool whose
// description is shortest. The unknown word alone brings up nothing, a
// known word or a number does not count as unknown, and what the caller
// cannot see does not count as known.
func TestSearchTakesAnUnknownWordForTheCallersOwnItems(t *testing.T) {
	const src = `version: 1
server: { name: items }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  edit: { scopes: [edit] }
  staff: { scopes: [staff] }
upstreams:
  up: { base_url: "http://127.0.0.1:9" }
tools:
  - { name: delete_comment, gate: edit, description: Deletes a comment., kind: write, request: { upstream: up, method: DELETE, path: "/comments/{id}" }, input: { type: object, properties: { id: { type: string } }, required: [id] } }
  - { name: delete_preset, gate: edit, description: Deletes a preset., kind: write, request: { upstream: up, method: DELETE, path: "/presets/{id}" }, input: { type: object, properties: { id: { type: string } }, required: [id] } }
  - { name: delete_permission, gate: edit, description: Deletes a permission., kind: write, request: { upstream: up, method: DELETE, path: "/permissions/{id}" }, input: { type: object, properties: { id: { type: string } }, required: [id] } }
  - { name: delete_item, gate: edit, description: "Deletes an existing item from the given collection, by its primary key.", kind: write, request: { upstream: up, method: DELETE, path: "/items/{collection}/{id}" }, input: { type: object, properties: { collection: { type: string }, id: { type: string } }, required: [collection, id] } }
  - { name: list_items, description: "Lists the items of the given collection, filtered and sorted as asked.", request: { upstream: up, method: GET, path: "/items/{collection}" }, input: { type: object, properties: { collection: { type: string } }, required: [collection] } }
  - { name: delete_newsletter, description: Deletes a newsletter article., kind: write, gate: staff, request: { upstream: up, method: DELETE, path: "/newsletters/{id}" }, input: { type: object, properties: { id: { type: string } }, required: [id] } }
  - { name: delete_cards_check_item_by_id_card, gate: edit, description: deleteCardsCheckItemByIdCard(), kind: write, request: { upstream: up, method: DELETE, path: "/cards/{id_card}/checkItem/{id_check_item}" }, input: { type: object, properties: { id_card: { type: string }, id_check_item: { type: string } }, required: [id_card, id_check_item] } }
  - { name: delete_cards_by_id_card, gate: edit, description: deleteCardsByIdCard(), kind: write, request: { upstream: up, method: DELETE, path: "/cards/{id_card}" }, input: { type: object, properties: { id_card: { type: string } }, required: [id_card] } }
`
	core := searchCore(t, "items.yaml", src)
	search := func(p *authz.Principal, query string) []string {
		t.Helper()
		found, err := core.Search(context.Background(), p, "", proxy.SearchQuery{Query: query, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		return listedNames(found)
	}
	agent := authz.NewPrincipal("agent", "acme", "", []string{"edit"}, nil)
	for _, c := range []struct{ query, first string }{
		{"remove an article", "delete_item"},
		{"fetch the invoices sent this week", "list_items"},
		{"remove a comment", "delete_comment"},
		// An item of the API's own, named inside a compound (checkItem),
		// is no record of the caller's.
		{"remove the invoice card", "delete_cards_by_id_card"},
	} {
		if got := search(agent, c.query); len(got) == 0 || got[0] != c.first {
			t.Errorf("search %q found %v, want %s first", c.query, got, c.first)
		}
	}
	// A path that names its format (/items.json) keeps its records
	// under "items" all the same.
	const rails = searchHead + `tools:
  - { name: create_item, description: Adds an item to a list., kind: write, gate: up_write, request: { upstream: up, method: POST, path: "/lists/{list_id}/items.json" }, input: { type: object, properties: { list_id: { type: string } }, required: [list_id] } }
  - { name: list_items, description: Lists the items of a list., request: { upstream: up, method: GET, path: "/lists/{list_id}/items.json" }, input: { type: object, properties: { list_id: { type: string } }, required: [list_id] } }
  - { name: create_comment, description: Adds a comment to a list., kind: write, gate: up_write, request: { upstream: up, method: POST, path: "/lists/{list_id}/comments.json" }, input: { type: object, properties: { list_id: { type: string } }, required: [list_id] } }
  - { name: create_list, description: Creates a list., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /lists.json } }
  - { name: create_preset, description: Adds a preset., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /presets.json } }
`
	wantFirst(t, searchCore(t, "rails.yaml", rails), "add an article to the reading list", "create_item")
	for _, number := range []string{"42", "٤٢"} {
		if got, want := search(agent, "remove "+number), search(agent, "remove"); !slices.Equal(got, want) {
			t.Errorf("search with the number %s found %v, want %v as without it", number, got, want)
		}
	}
	if got := search(agent, "gizmo"); len(got) != 0 {
		t.Errorf("search for a word no tool uses found %v, want nothing", got)
	}
	staff := authz.NewPrincipal("editor", "acme", "", []string{"edit", "staff"}, nil)
	if got := search(staff, "remove an article"); len(got) == 0 || got[0] != "delete_newsletter" {
		t.Errorf("a caller who sees a tool about articles found %v, want delete_newsletter first", got)
	}
}

// A query that points at one thing ("this pool", an identifier it
// quotes) wants the tool that addresses one thing by its key, and the
// same words without a pointer still want the collection; "what is" then
// asks about that thing, while "which groups" still asks for a list. A quoted
// identifier counts by its type prefix (pool1…, addr1…), not by the
// fragments of its code, and the abbreviations APIs write in names and
// paths (txs, env, addr) meet the words a user writes.
func TestSearchTakesAPointerForOneThing(t *testing.T) {
	const src = `version: 1
server: { name: chain }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
upstreams:
  up: { base_url: "http://127.0.0.1:9" }
tools:
  - { name: list_pools, description: Lists the stake pools., request: { upstream: up, method: GET, path: /pools } }
  - { name: get_pool, description: One stake pool., request: { upstream: up, method: GET, path: "/pools/{pool_id}" }, input: { type: object, properties: { pool_id: { type: string } }, required: [pool_id] } }
  - { name: get_tx, description: Returns one tx., request: { upstream: up, method: GET, path: "/txs/{hash}" }, input: { type: object, properties: { hash: { type: string } }, required: [hash] } }
  - { name: list_blocks, description: Lists the latest blocks., request: { upstream: up, method: GET, path: /blocks } }
  - { name: get_addr, description: One addr and what it holds., request: { upstream: up, method: GET, path: "/addrs/{addr}" }, input: { type: object, properties: { addr: { type: string } }, required: [addr] } }
  - { name: list_sites, description: Lists the sites., request: { upstream: up, method: GET, path: /sites } }
  - { name: get_user_group, description: One group of a user., request: { upstream: up, method: GET, path: "/users/{user_id}/groups/{group_id}" }, input: { type: object, properties: { user_id: { type: string }, group_id: { type: string } }, required: [user_id, group_id] } }
  - { name: list_user_groups, description: The groups of a user., request: { upstream: up, method: GET, path: "/users/{user_id}/groups" }, input: { type: object, properties: { user_id: { type: string } }, required: [user_id] } }
  - { name: get_site_env, description: The env vars of a site., request: { upstream: up, method: GET, path: "/sites/{site_id}/env" }, input: { type: object, properties: { site_id: { type: string } }, required: [site_id] } }
`
	core := searchCore(t, "chain.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"no pointer asks for the collection", "what stake pools are there", "list_pools"},
		{"this points at one", "what is the pledge of this stake pool", "get_pool"},
		{"what's is what is", "what's the pledge of this stake pool", "get_pool"},
		{"which still asks for a list", "which groups is this user in", "list_user_groups"},
		{"a quoted identifier points at one", "what is the pledge of pool1pu5jlj4q9w9jlxeu370a3c9myx47md5j5m2str0naunn2q3lkdy", "get_pool"},
		{"an identifier counts by its type prefix", "what does addr1qx2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3 hold", "get_addr"},
		{"the pieces of an identifier are no words", "k1a2b3c4d5e6f7g8h9i0j1k2l3m4n5o6p7q8r9s0t1u2v3w4x5y6z7aa8bb9cc0dd1ee2ff3gg4hh5ii6jj7kk8: which environment variables does the site have", "get_site_env"},
		{"an abbreviation in a path meets the word", "did my transaction go through", "get_tx"},
		{"two abbreviations in a description meet the words", "which environment variables does the site have", "get_site_env"},
	})
}

// wantFirst checks that an offline search for query ranks first first.
// firstCase is a search whose first answer must be first.
type firstCase struct{ name, query, first string }

// wantFirsts runs each case as a subtest of t.
func wantFirsts(t *testing.T, core *proxy.Core, cases []firstCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantFirst(t, core, c.query, c.first) })
	}
}

func wantFirst(t *testing.T, core *proxy.Core, query, first string) {
	t.Helper()
	found, err := core.SearchCatalog(proxy.SearchQuery{Query: query, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if names := listedNames(found); len(names) == 0 || names[0] != first {
		t.Errorf("search %q found %v, want %s first", query, names, first)
	}
}

// searchCore builds the core of a catalog given as YAML text.
func searchCore(t *testing.T, name, src string) *proxy.Core {
	t.Helper()
	cat, err := catalog.Parse(name, []byte(src), &catalog.LoadOptions{Getenv: scaleEnv})
	if err != nil {
		t.Fatal(err)
	}
	core, err := proxy.New(cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	return core
}

// A tool is also found by the fields its result holds (its
// output_schema, two levels down and through arrays), as evidence for a
// word the tool's own text lacks: "the homepage of this pool"
// is the tool whose answer carries it. A result field counts for less
// than the same word in a name, so the tool named for a word stays
// first; and what a tool the caller cannot see holds finds nothing.
func TestSearchReadsTheFieldsOfAResult(t *testing.T) {
	const src = `version: 1
server: { name: results }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  staff: { scopes: [staff] }
upstreams:
  up: { base_url: "http://127.0.0.1:9" }
tools:
  - name: get_pool
    description: One stake pool.
    request: { upstream: up, method: GET, path: "/pools/{pool_id}" }
    input: { type: object, properties: { pool_id: { type: string } }, required: [pool_id] }
  - name: get_pool_metadata
    description: What the operator of a pool says of it.
    request: { upstream: up, method: GET, path: "/pools/{pool_id}/metadata" }
    input: { type: object, properties: { pool_id: { type: string } }, required: [pool_id] }
    output_schema: { type: object, properties: { ticker: { type: string }, homepage: { type: string }, name: { type: string } } }
  - name: list_tickers
    description: Lists the tickers an oracle reports.
    request: { upstream: up, method: GET, path: /tickers }
  - name: get_genesis
    description: The parameters the chain started with.
    request: { upstream: up, method: GET, path: /genesis }
    output_schema: { type: object, properties: { items: { type: array, items: { type: object, properties: { network_magic: { type: integer }, slot_length: { type: integer } } } } } }
  - name: get_payroll
    gate: staff
    description: The payroll run.
    request: { upstream: up, method: GET, path: /payroll }
    output_schema: { type: object, properties: { salary: { type: object, properties: { bonus: { type: number } } } } }
`
	core := searchCore(t, "results.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"fields of the result", "the homepage of this pool", "get_pool_metadata"},
		{"fields under an array", "which network magic does this chain use", "get_genesis"},
		{"a name outranks a result field", "list the tickers", "list_tickers"},
	})
	agent := authz.NewPrincipal("agent", "acme", "", nil, nil)
	found, err := core.Search(context.Background(), agent, "", proxy.SearchQuery{Query: "salary bonus", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 0 {
		t.Errorf("a caller who cannot see get_payroll found %v by its result's fields", listedNames(found))
	}
	staff := authz.NewPrincipal("hr", "acme", "", []string{"staff"}, nil)
	if found, err := core.Search(context.Background(), staff, "", proxy.SearchQuery{Query: "salary bonus", Limit: 5}); err != nil || len(found) == 0 || found[0].Tool.Name != "get_payroll" {
		t.Errorf("a caller who sees get_payroll found %v (%v), want it first", listedNames(found), err)
	}
}

// A tool's search_hint holds the words users say for it that its own
// text lacks: a search finds the tool by them, whether the hint is the
// tool's or an override's, a name still outranks a hint, a full listing
// sends the hint to clients that search themselves, and a hidden tool's
// hint finds nothing.
func TestSearchReadsSearchHints(t *testing.T) {
	const src = `version: 1
server: { name: hints }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  staff: { scopes: [staff] }
upstreams:
  up: { base_url: "http://127.0.0.1:9" }
tools:
  - name: create_user
    description: Creates a user in the directory.
    search_hint: onboard a new hire or employee
    request: { upstream: up, method: GET, path: /users/new }
  - name: list_users
    description: Lists the users of the directory.
    request: { upstream: up, method: GET, path: /users }
  - name: list_hires
    description: Lists the hiring requests.
    request: { upstream: up, method: GET, path: /hires }
  - name: create_network_zone
    description: Creates a network zone.
    request: { upstream: up, method: GET, path: /zones/new }
  - name: get_payroll
    gate: staff
    description: The payroll run.
    search_hint: salary bonus
    request: { upstream: up, method: GET, path: /payroll }
overrides:
  create_network_zone:
    search_hint: block sign-ins from an IP range
`
	core := searchCore(t, "hints.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"the tool's hint", "onboard an employee", "create_user"},
		{"an override's hint", "block sign-ins from these IP addresses", "create_network_zone"},
		{"a name outranks a hint", "list the hires", "list_hires"},
	})
	agent := authz.NewPrincipal("agent", "acme", "", nil, nil)
	if found, err := core.Search(context.Background(), agent, "", proxy.SearchQuery{Query: "salary bonus", Limit: 5}); err != nil || len(found) != 0 {
		t.Errorf("a caller who cannot see get_payroll found %v (%v) by its hint", listedNames(found), err)
	}
	for _, l := range core.List(context.Background(), agent) {
		if l.Tool.Name == "create_user" && !strings.Contains(string(l.MCP), `"anthropic/searchHint":"onboard a new hire or employee"`) {
			t.Errorf("create_user is listed as %s, want its search_hint in _meta", l.MCP)
		}
	}
}

// What signing, billing and tracker users say: "file a bug" creates an
// issue and "leave a comment" adds one (with an article; "leave the
// team" still leaves), what follows an order's colon is the thing's
// text, a void cancels, buying purchases, a subscription is a plan,
// what is overdue is past due, what runs nightly has a schedule, and
// "have our bot get called" orders where "have the webhooks been called"
// asks, and looking up the one a query names gets it.
func TestSearchKnowsWhatSignersAndTrackersSay(t *testing.T) {
	const src = searchHead + `tools:
  - { name: create_issue, description: Creates an issue in a repository., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /repos/issues } }
  - { name: list_files, description: Lists the files of a repository., request: { upstream: up, method: GET, path: /repos/files } }
  - { name: upload_file, description: Uploads a file to a repository., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /repos/files } }
  - { name: get_login_settings, description: Returns the login page settings., request: { upstream: up, method: GET, path: /settings/login } }
  - { name: list_pr_comments, description: Lists the comments on a pull request., request: { upstream: up, method: GET, path: /pulls/comments } }
  - { name: create_pr_comment, description: Comments on a pull request., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /pulls/comments } }
  - { name: add_test_run, description: Adds tests to a pull request's run., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /pulls/tests } }
  - { name: leave_team, description: Leaves a team., kind: write, gate: up_write, request: { upstream: up, method: DELETE, path: /teams/membership } }
  - { name: cancel_envelope, description: Cancels an envelope that is out for signature., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /envelopes/cancel } }
  - { name: get_envelope, description: Returns an envelope., request: { upstream: up, method: GET, path: /envelopes/one } }
  - { name: purchase_credits, description: Purchases more sending credits., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /billing/credits } }
  - { name: list_credits, description: Lists the sending credits left., request: { upstream: up, method: GET, path: /credits } }
  - { name: get_billing_plan, description: Returns the account's billing plan., request: { upstream: up, method: GET, path: /billing/plan } }
  - { name: list_invoices, description: Lists the invoices., request: { upstream: up, method: GET, path: /billing/invoices } }
  - { name: list_past_due_invoices, description: Lists the invoices past due., request: { upstream: up, method: GET, path: /billing/invoices/past_due } }
  - { name: create_pipeline, description: Runs a pipeline on a branch., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /pipelines } }
  - { name: create_pipeline_schedule, description: Creates a schedule for a pipeline., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /pipelines/schedules } }
  - { name: create_webhook, description: Registers a webhook for the pipelines' events., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /webhooks } }
  - { name: list_webhooks, description: Lists the webhooks registered for the pipelines' events., request: { upstream: up, method: GET, path: /webhooks } }
  - { name: get_order, description: Returns an order., input: { type: object, properties: { id: { type: string } }, required: [id] }, request: { upstream: up, method: GET, path: "/orders/{id}" } }
  - { name: search_orders, description: Searches the orders by customer or status., request: { upstream: up, method: GET, path: /orders/search } }
`
	wantFirsts(t, searchCore(t, "signers.yaml", src), []firstCase{
		{"file a bug creates an issue", "file a bug: the login page throws a 500 when the password is empty", "create_issue"},
		{"the file is a file", "list the files in the repo", "list_files"},
		{"leave a comment adds one", "leave a comment on PR 17: looks fine but please add tests", "create_pr_comment"},
		{"leave the team still leaves", "leave the platform team", "leave_team"},
		{"void cancels", "void the offer letter envelope, the terms changed", "cancel_envelope"},
		{"buy purchases", "buy 500 more sending credits", "purchase_credits"},
		{"a subscription is a plan", "what subscription are we on?", "get_billing_plan"},
		{"overdue is past due", "any overdue invoices?", "list_past_due_invoices"},
		{"nightly is a schedule", "set up a nightly pipeline on main", "create_pipeline_schedule"},
		{"have it done is an order", "have our bot get called whenever a pipeline fails", "create_webhook"},
		{"have it been done is a question", "have the webhooks been called whenever a pipeline failed", "list_webhooks"},
		{"look up one gets it", "look up order 1234", "get_order"},
		{"look up many searches", "look up the orders of acme corp", "search_orders"},
	})
}

// "Log a user out" is the phrasal verb's, though "log" with an article
// after it ("log a defect") makes the thing.
func TestSearchLogsAUserOutRatherThanMakingOne(t *testing.T) {
	const src = searchHead + `tools:
  - { name: logout_user, description: Logs a user out., kind: write, gate: up_write, request: { upstream: up, method: POST, path: "/users/{user_id}/logout" }, input: { type: object, properties: { user_id: { type: string } }, required: [user_id] } }
  - { name: get_user, description: Returns a user., request: { upstream: up, method: GET, path: "/users/{user_id}" }, input: { type: object, properties: { user_id: { type: string } }, required: [user_id] } }
  - { name: create_user, description: Adds a user., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /users } }
  - { name: create_issue, description: Creates an issue in a repository., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /repos/issues } }
`
	wantFirsts(t, searchCore(t, "logout.yaml", src), []firstCase{
		{"a phrasal verb around its object", "log a user out", "logout_user"},
		{"and with more after it", "log a user out everywhere", "logout_user"},
		{"log with an article makes", "log a bug", "create_issue"},
	})
}

// A query that is a tool's name in words ("create issue") finds that
// tool first, however long its description: Jira's create_issue, whose
// description and arguments run to pages, ranked below twenty short
// tools that say "creates" and "issues" until then. A filter that
// leaves the tool out (kind: read) is obeyed, as visibility is.
func TestSearchPutsTheToolNamedByTheQueryFirst(t *testing.T) {
	long := strings.Repeat("The fields that can be set are determined by the project, the issue type and the screen configured for it; see the metadata operation. ", 60)
	src := searchHead + `tools:
  - { name: create_issue, description: "Creates an issue or a subtask. ` + long + `", kind: write, gate: up_write, request: { upstream: up, method: POST, path: /issue } }
  - { name: link_issues, description: Creates a link between two issues., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /issueLink } }
  - { name: create_filter, description: Creates a filter of issues., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /filter } }
  - { name: create_issue_type, description: Creates an issue type., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /issuetype } }
  - { name: add_comment, description: Adds a comment to an issue., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /issue/comment } }
  - { name: get_issue, description: "Returns an issue. ` + long + `", request: { upstream: up, method: GET, path: "/issue/{key}" }, input: { type: object, properties: { key: { type: string } }, required: [key] } }
  - { name: get_issue_watchers, description: Returns the watchers of an issue., request: { upstream: up, method: GET, path: "/issue/{key}/watchers" }, input: { type: object, properties: { key: { type: string } }, required: [key] } }
`
	core := searchCore(t, "named.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"the name's words", "create issue", "create_issue"},
		{"with an article, in another case", "Create an Issue", "create_issue"},
		{"a new one is the one created", "create a new issue", "create_issue"},
		{"a read", "get issue", "get_issue"},
		{"words beyond the name rank as before", "create an issue link", "link_issues"},
	})
	// A filter that leaves the named tool out is obeyed.
	found, err := core.SearchCatalog(proxy.SearchQuery{Query: "create issue", Kind: "read", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if names := listedNames(found); slices.Contains(names, "create_issue") {
		t.Errorf("kind read found %v", names)
	}
}

// A plural asks for the collection ("what projects do I have": GET
// /projects), above tools that hang off one project or answer about the
// caller; a query about one thing ("the endpoints of this project") is
// not moved.
func TestSearchReadsAPluralAsItsCollection(t *testing.T) {
	long := strings.Repeat("The answer is paged: pass the cursor of the previous page to get the next, and a limit of at most 400 to set its size. ", 20)
	src := searchHead + `tools:
  - { name: list_projects, description: "Lists the projects of the account. ` + long + `", request: { upstream: up, method: GET, path: /projects } }
  - { name: list_project_endpoints, description: Lists the endpoints of a project you have., request: { upstream: up, method: GET, path: "/projects/{project_id}/endpoints" }, input: { type: object, properties: { project_id: { type: string, description: The project. } }, required: [project_id] } }
  - { name: list_project_permissions, description: Lists who has access to a project., request: { upstream: up, method: GET, path: "/projects/{id}/permissions" }, input: { type: object, properties: { id: { type: string } }, required: [id] } }
  - { name: get_current_user_organizations, description: Lists the organizations the current user has., request: { upstream: up, method: GET, path: /users/me/organizations } }
`
	core := searchCore(t, "plural.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"a plural asks for its collection", "what projects do I have", "list_projects"},
		{"one thing is not many", "which endpoints does this project have", "list_project_endpoints"},
	})
}

// A listener's words are not a music API's: a song is a track, a podcast
// a show, a speaker a device, and throwing a song onto a playlist adds
// it. A developer's are a forge's: an MR is a merge request, a
// discussion its comments, locking a branch protects it, and a folder's
// listing is a tree.
func TestSearchKnowsWhatListenersAndForgesSay(t *testing.T) {
	const src = searchHead + `tools:
  - { name: get_saved_albums, description: Lists the albums saved in the user's library., request: { upstream: up, method: GET, path: /me/albums } }
  - { name: get_saved_tracks, description: Lists the tracks saved in the user's library., request: { upstream: up, method: GET, path: /me/tracks } }
  - { name: get_saved_shows, description: Lists the shows saved in the user's library., request: { upstream: up, method: GET, path: /me/shows } }
  - { name: get_available_devices, description: Lists the user's available devices., request: { upstream: up, method: GET, path: /me/player/devices } }
  - { name: get_player, description: Returns the user's playback state., request: { upstream: up, method: GET, path: /me/player } }
  - { name: add_tracks_to_playlist, description: Adds items to a playlist., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /playlists/tracks } }
  - { name: get_playlist, description: Returns a playlist., request: { upstream: up, method: GET, path: /playlists } }
  - { name: follow_artists, description: Follows artists., kind: write, gate: up_write, request: { upstream: up, method: PUT, path: /me/following } }
  - { name: unfollow_artists, description: Unfollows artists., kind: write, gate: up_write, request: { upstream: up, method: DELETE, path: /me/following } }
  - { name: get_artist_top_tracks, description: Returns an artist's top tracks by country., request: { upstream: up, method: GET, path: /artists/top-tracks } }
  - { name: get_artist, description: Returns an artist., request: { upstream: up, method: GET, path: /artists } }
  - { name: create_merge_request, description: Creates a merge request., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /projects/merge_requests } }
  - { name: create_project_key, description: Adds a key to a project., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /projects/keys } }
  - { name: list_merge_request_commits, description: Lists the commits of a merge request., request: { upstream: up, method: GET, path: /projects/merge_requests/commits } }
  - { name: list_merge_request_notes, description: Lists the notes on a merge request., request: { upstream: up, method: GET, path: /projects/merge_requests/notes } }
  - { name: protect_branch, description: Protects a branch., kind: write, gate: up_write, request: { upstream: up, method: PUT, path: /projects/branches/protect } }
  - { name: update_branch, description: Updates a branch., kind: write, gate: up_write, request: { upstream: up, method: PUT, path: /projects/branches } }
  - { name: list_repository_files, description: Lists a repository's files., request: { upstream: up, method: GET, path: /projects/repository/files } }
  - { name: list_repository_tree, description: Lists a repository's tree., request: { upstream: up, method: GET, path: /projects/repository/tree } }
`
	core := searchCore(t, "listeners.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"a song is a track", "which songs have I saved?", "get_saved_tracks"},
		{"a podcast is a show", "what podcasts did I save?", "get_saved_shows"},
		{"a speaker is a device", "which speakers can I play on?", "get_available_devices"},
		{"throwing a song onto a playlist adds it", "throw this song onto my Gym playlist", "add_tracks_to_playlist"},
		{"stop following is unfollow", "stop following Drake", "unfollow_artists"},
		{"popular is top", "what's her most popular song?", "get_artist_top_tracks"},
		{"an MR is a merge request", "open an MR for the sso work", "create_merge_request"},
		{"a discussion is comments", "show the review discussion on merge request 312", "list_merge_request_notes"},
		{"locking a branch protects it", "lock down the main branch", "protect_branch"},
		{"a folder's listing is a tree", "list the folders at the top of the repo", "list_repository_tree"},
	})
}

// "Which account is this token for?" is answered by the tool that says
// who the caller is, though its words reach tokens and accounts; a
// question about a user's keys is not.
func TestSearchAnswersWhoAmI(t *testing.T) {
	const src = searchHead + `tools:
  - { name: list_accounts_for_plan, description: Lists the accounts on a plan and their tokens., request: { upstream: up, method: GET, path: /plans/accounts } }
  - { name: list_user_keys, description: Lists a user's keys and tokens., request: { upstream: up, method: GET, path: /users/keys } }
  - { name: get_token, description: Returns an API token of the account., request: { upstream: up, method: GET, path: /tokens/one } }
  - { name: rotate_token, description: Rotates an API token., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /tokens/rotate } }
  - { name: get_user, description: Returns a user., request: { upstream: up, method: GET, path: /user } }
  - { name: get_my_permissions, description: Returns my permissions., request: { upstream: up, method: GET, path: /permissions/me } }
  - { name: get_profile, description: Returns the profile., request: { upstream: up, method: GET, path: /users/me } }
  - { name: get_current_weather, description: Returns the current weather., request: { upstream: up, method: GET, path: /v1/current.json } }
  - { name: list_followed_artists, description: Lists the artists the user follows., request: { upstream: up, method: GET, path: /me/following } }
`
	core := searchCore(t, "whoami.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"whose token", "which account is this token for?", "get_profile"},
		{"whose key", "which user does this API key belong to?", "get_profile"},
		{"logged in as", "who am I logged in as?", "get_profile"},
		{"whoami", "whoami", "get_profile"},
		{"a user's keys", "which keys does this user have?", "list_user_keys"},
		{"a write about a token", "rotate this token", "rotate_token"},
		{"whom I follow", "who am I following?", "list_followed_artists"},
	})
	// A tool the query names goes before the caller's own.
	named := searchCore(t, "whoami-named.yaml", searchHead+`tools:
  - { name: get_profile, description: Returns the profile., request: { upstream: up, method: GET, path: /users/me } }
  - { name: whoami, description: Returns the session., request: { upstream: up, method: GET, path: /auth/session } }
`)
	if got, err := named.SearchCatalog(proxy.SearchQuery{Query: "whoami"}); err != nil || len(got) != 2 || got[0].Tool.Name != "whoami" {
		t.Errorf("whoami found %v (%v), want whoami then get_profile", listedNames(got), err)
	}
	// /user may read any user; /users/me is the caller, so it comes first.
	got, err := core.SearchCatalog(proxy.SearchQuery{Query: "who am I?"})
	if err != nil || len(got) < 2 || got[0].Tool.Name != "get_profile" || got[1].Tool.Name != "get_user" {
		t.Errorf("who am I? found %v (%v), want get_profile then get_user", listedNames(got), err)
	}
}

// A query that names a tool in synonyms ("create a bug", "open a
// ticket": create_issue) puts it first, as its own words would, however
// long its description and however often other tools say "bug"; where
// the thing goes ("in the PAY project") is no word of its name.
func TestSearchNamesAToolInSynonyms(t *testing.T) {
	long := strings.Repeat("Creates an issue or, where the option is set, a sub-task, from the fields and properties given in the request, validated against the project's screens. ", 30)
	src := searchHead + `tools:
  - { name: create_filter, description: Creates a filter of bugs and tasks for a bug board., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /filters } }
  - { name: add_bug_vote, description: Votes for a bug., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /votes } }
  - { name: create_issue, description: "` + long + `", kind: write, gate: up_write, request: { upstream: up, method: POST, path: /issue } }
  - { name: list_issues, description: Lists issues., request: { upstream: up, method: GET, path: /issues } }
  - { name: create_project, description: Creates a project., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /project } }
  - { name: create_project_role, description: Creates a role in a project., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /project/role } }
`
	core := searchCore(t, "synonyms.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"create a bug", "create a bug", "create_issue"},
		{"open a ticket", "open a ticket", "create_issue"},
		{"where it goes is no word of the name", "open a ticket in the PAY project", "create_issue"},
		{"a read names no write", "show me the bugs", "list_issues"},
	})
}

// A payer's and a caller's words: money and funds are a balance, paying
// out makes a payout, what was spent is usage and cost, a day's figures
// are daily; a bridge is a conference call, and pulling someone into
// one adds them; "text +1555…" sends a message.
func TestSearchKnowsWhatPayersAndCallersSay(t *testing.T) {
	const src = searchHead + `tools:
  - { name: get_balance, description: Retrieves the current account balance., request: { upstream: up, method: GET, path: /balance } }
  - { name: list_bank_accounts, description: Lists the bank accounts money is paid to., request: { upstream: up, method: GET, path: /bank_accounts } }
  - { name: create_payout, description: Creates a payout to a bank account., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /payouts } }
  - { name: update_bank_account, description: Updates a bank account., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /bank_accounts/one } }
  - { name: list_usage_records, description: Lists usage records., request: { upstream: up, method: GET, path: /usage/records } }
  - { name: list_usage_records_daily, description: Lists usage records for each day., request: { upstream: up, method: GET, path: /usage/records/daily } }
  - { name: list_calls, description: Lists calls., request: { upstream: up, method: GET, path: /calls } }
  - { name: fetch_conference, description: Fetches a conference., request: { upstream: up, method: GET, path: /conferences/one } }
  - { name: create_participant, description: Adds a participant to a conference., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /conferences/participants } }
  - { name: delete_participant, description: Removes a participant from a conference., kind: write, gate: up_write, request: { upstream: up, method: DELETE, path: /conferences/participants } }
  - { name: list_messages, description: Lists the messages sent and received., request: { upstream: up, method: GET, path: /messages } }
  - { name: update_message, description: Updates the body of a message., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /messages/one } }
  - { name: create_message, description: Sends a new message., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /messages } }
`
	core := searchCore(t, "payers.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"money is a balance", "how much money do we have?", "get_balance"},
		{"paying out makes a payout", "pay out $5,000 to the bank account", "create_payout"},
		{"what was spent is usage", "what have we spent this year?", "list_usage_records"},
		{"a day's figures are daily", "usage for each day of last week", "list_usage_records_daily"},
		{"a bridge is a conference", "is the all-hands bridge still going?", "fetch_conference"},
		{"pulling someone into a call adds them", "pull +12125550199 into the conference", "create_participant"},
		{"text a number sends a message", "text +15551234567 from +15557654321: the order has shipped", "create_message"},
		{"the text of a message is no order", "show me the text of yesterday's messages", "list_messages"},
	})
}

// An order to create favours a POST to a collection over a POST to a
// key, which changes what exists, when the two are named alike (Stripe's
// post_customers and post_customers_customer).
func TestSearchCreatesIntoACollection(t *testing.T) {
	const src = searchHead + `tools:
  - { name: post_customers_customer, description: "Updates a customer: takes the arguments with which you create a new customer.", kind: write, gate: up_write, input: { type: object, properties: { customer: { type: string } }, required: [customer] }, request: { upstream: up, method: POST, path: "/v1/customers/{customer}" } }
  - { name: post_customers, description: "Creates a new customer object, with the address, email, name, phone, shipping and tax details given.", kind: write, gate: up_write, request: { upstream: up, method: POST, path: /v1/customers } }
  - { name: get_customers, description: Returns a list of your customers., request: { upstream: up, method: GET, path: /v1/customers } }
`
	core := searchCore(t, "creates.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"create", "create a new customer for Acme Corp", "post_customers"},
		{"add", "add a customer", "post_customers"},
		{"an update is no create", "update customer cus_123", "post_customers_customer"},
	})
}

// What a tool is named in synonyms never depends on the tools a caller
// cannot see: hidden tools named in every word of the large synonym
// groups leave a caller's answers as they are without them (they once
// used up the tries before the visible name was reached).
func TestSearchNamesInSynonymsIgnoreHiddenTools(t *testing.T) {
	head := `version: 1
server: { name: hidden }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  writer: { scopes: [write] }
  staff: { scopes: [staff] }
upstreams:
  up: { base_url: "http://127.0.0.1:9" }
tools:
  - { name: register_colleague_attachment, description: "` + strings.Repeat("Keeps the older versions as they were before. ", 20) + `", kind: write, gate: writer, request: { upstream: up, method: POST, path: /colleagues/attachments } }
  - { name: create_user_file_record, description: Creates a file record for a user., kind: write, gate: writer, request: { upstream: up, method: POST, path: /users/files } }
`
	var hidden strings.Builder
	for i, w := range strings.Fields("add new make register open upsert file image picture photo media asset attachment upload spreadsheet workbook deck presentation pdf user member person people account employee colleague staff someone somebody everyone collaborator hire newcomer") {
		fmt.Fprintf(&hidden, "  - { name: secret_%s, description: Hidden., kind: write, gate: staff, request: { upstream: up, method: POST, path: /secret/%d } }\n", w, i)
	}
	plain := searchCore(t, "plain.yaml", head)
	crowded := searchCore(t, "crowded.yaml", head+hidden.String())
	writer := authz.NewPrincipal("w", "acme", "", []string{"write"}, nil)
	for _, q := range []string{"create a file for a user", "add an attachment for a colleague", "upload a photo for a user"} {
		want, err := plain.Search(context.Background(), writer, "", proxy.SearchQuery{Query: q, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		got, err := crowded.Search(context.Background(), writer, "", proxy.SearchQuery{Query: q, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(listedNames(got), listedNames(want)) {
			t.Errorf("%q found %v beside hidden tools and %v without them", q, listedNames(got), listedNames(want))
		}
	}
}

// Naming a tool by a query's other words, in synonyms or without where
// it goes, does not pass over a tool whose name says more of the query
// ("list users in the admins group": list_group_users), nor name a tool
// for a phrase that orders nothing ("job runs", "image files"); a
// medium is a verb only before whom to send to or a number.
func TestSearchNamesNoWrongTool(t *testing.T) {
	const src = searchHead + `tools:
  - { name: list_users, description: Lists users., request: { upstream: up, method: GET, path: /users } }
  - { name: list_group_users, description: Lists the users of a group., request: { upstream: up, method: GET, path: /groups/users } }
  - { name: list_issues, description: Lists issues., request: { upstream: up, method: GET, path: /issues } }
  - { name: list_project_issues, description: Lists the issues of a project., request: { upstream: up, method: GET, path: /projects/issues } }
  - { name: create_webhook, description: Creates a webhook., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /webhooks } }
  - { name: create_repo_webhook, description: Creates a webhook for a repository., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /repos/webhooks } }
  - { name: run_task, description: Runs a task., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /tasks/run } }
  - { name: list_job_runs, description: Lists the runs of a job., request: { upstream: up, method: GET, path: /jobs/runs } }
  - { name: upload_photo, description: Uploads a photo., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /photos } }
  - { name: list_files, description: Lists image files and documents., request: { upstream: up, method: GET, path: /files } }
  - { name: send_sms, description: Sends a text message., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /sms } }
  - { name: synthesize_speech, description: Turns text to speech., request: { upstream: up, method: POST, path: /speech } }
  - { name: get_sms_pricing, description: The price of an SMS by country., request: { upstream: up, method: GET, path: /sms/pricing } }
`
	core := searchCore(t, "wrong.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"a group's users", "list users in the admins group", "list_group_users"},
		{"a project's issues", "list issues in the PAY project", "list_project_issues"},
		{"a repository's webhook", "create a webhook on the repository for pushes", "create_repo_webhook"},
		{"a noun phrase names no write", "job runs", "list_job_runs"},
		{"nor an upload", "image files", "list_files"},
		{"text to speech sends nothing", "text to speech", "synthesize_speech"},
		{"nor sms pricing", "sms for Germany pricing", "get_sms_pricing"},
		{"text me sends", "text me the logs", "send_sms"},
	})
}

// A viewer's and a forum's words: keywords are tags, similar is related,
// a showcase is an album; a profile is a user's, a handle a username,
// and getting out of a group leaves it.
func TestSearchKnowsWhatViewersAndForumsSay(t *testing.T) {
	const src = searchHead + `tools:
  - { name: get_video, description: Returns a video., request: { upstream: up, method: GET, path: /videos/one } }
  - { name: get_video_tags, description: Lists the tags of a video., request: { upstream: up, method: GET, path: /videos/tags } }
  - { name: get_related_videos, description: Lists related videos., request: { upstream: up, method: GET, path: /videos/related } }
  - { name: search_videos, description: Searches for videos., request: { upstream: up, method: GET, path: /videos } }
  - { name: get_albums, description: Lists the albums of the user., request: { upstream: up, method: GET, path: /me/albums } }
  - { name: get_channels, description: Lists channels., request: { upstream: up, method: GET, path: /channels } }
  - { name: get_group, description: Returns a group., request: { upstream: up, method: GET, path: /groups/one } }
  - { name: leave_group, description: Leaves a group., kind: write, gate: up_write, request: { upstream: up, method: DELETE, path: /groups/members/me } }
  - { name: get_category, description: Returns a category., request: { upstream: up, method: GET, path: /categories/one } }
  - { name: get_user, description: Returns a user., request: { upstream: up, method: GET, path: /users/one } }
  - { name: update_email, description: Changes the email address., kind: write, gate: up_write, request: { upstream: up, method: PUT, path: /users/email } }
  - { name: update_username, description: Changes the username., kind: write, gate: up_write, request: { upstream: up, method: PUT, path: /users/username } }
`
	core := searchCore(t, "viewers.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"keywords are tags", "what keywords are set on video 123456?", "get_video_tags"},
		{"similar is related", "which videos are similar to 8899001?", "get_related_videos"},
		{"a showcase is an album", "show my showcases", "get_albums"},
		{"a profile is a user's", "pull up jsmith's profile", "get_user"},
		{"a handle is a username", "change his handle to john.doe", "update_username"},
		{"getting out of a group leaves it", "get me out of group 334, too much noise", "leave_group"},
	})
}

// A mailer's and a broadcaster's words: an email is a message, a mail
// rule a filter, a conversation a thread, a feed activity; to
// unsubscribe deletes a subscription, a livestream is a live broadcast;
// and "open message 18c2…" reads it, where "open a ticket" makes one.
func TestSearchKnowsWhatInboxesAndBroadcastersSay(t *testing.T) {
	const src = searchHead + `tools:
  - { name: list_messages, description: Lists the messages in the mailbox., request: { upstream: up, method: GET, path: /messages } }
  - { name: get_message, description: Gets the specified message., input: { type: object, properties: { id: { type: string } }, required: [id] }, request: { upstream: up, method: GET, path: "/messages/{id}" } }
  - { name: modify_message, description: Modifies the labels of the specified message., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /messages/one/modify } }
  - { name: get_send_as, description: Gets the specified send-as alias for email., request: { upstream: up, method: GET, path: /settings/sendAs } }
  - { name: list_filters, description: Lists the message filters., request: { upstream: up, method: GET, path: /settings/filters } }
  - { name: list_labels, description: Lists the labels., request: { upstream: up, method: GET, path: /labels } }
  - { name: get_thread, description: Gets the specified thread., request: { upstream: up, method: GET, path: /threads/one } }
  - { name: list_channels, description: Lists channels., request: { upstream: up, method: GET, path: /channels } }
  - { name: list_activities, description: Lists the activities of a channel., request: { upstream: up, method: GET, path: /activities } }
  - { name: delete_subscription, description: Deletes a subscription., kind: write, gate: up_write, request: { upstream: up, method: DELETE, path: /subscriptions } }
  - { name: update_channel, description: Updates a channel., kind: write, gate: up_write, request: { upstream: up, method: PUT, path: /channels } }
  - { name: insert_live_broadcast, description: Inserts a live broadcast., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /live/broadcasts } }
  - { name: insert_video, description: Inserts a video., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /videos } }
`
	core := searchCore(t, "mailers.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"an email is a message", "list the emails in my mailbox", "list_messages"},
		{"a mail rule is a filter", "do I have any rules that sort incoming mail?", "list_filters"},
		{"a conversation is a thread", "pull up conversation 17f9a3c1d2e4b5a6", "get_thread"},
		{"a feed is activity", "what's been in the channel's feed lately?", "list_activities"},
		{"unsubscribing deletes a subscription", "I'm done with that channel, unsubscribe me", "delete_subscription"},
		{"a livestream is a live broadcast", "schedule a livestream for Saturday", "insert_live_broadcast"},
		{"opening what exists reads it", "open message 18c2f0a9b7d4e113 and tell me what it says", "get_message"},
	})
}

// A bookkeeper's and an operator's words: what we owe is payable, and to
// bump a limit or a priority changes it.
func TestSearchKnowsWhatBookkeepersAndOperatorsSay(t *testing.T) {
	const src = searchHead + `tools:
  - { name: get_invoices, description: Lists invoices., request: { upstream: up, method: GET, path: /invoices } }
  - { name: get_report_aged_payables, description: The aged payables report by contact., request: { upstream: up, method: GET, path: /reports/aged-payables } }
  - { name: container_list, description: Lists containers., request: { upstream: up, method: GET, path: /containers } }
  - { name: container_inspect, description: Returns low-level information about a container., request: { upstream: up, method: GET, path: /containers/one } }
  - { name: container_update, description: Changes various configuration options of a container without having to recreate it., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /containers/update } }
`
	core := searchCore(t, "bookkeepers.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"what we owe is payable", "how much do we owe our suppliers, and since when?", "get_report_aged_payables"},
		{"to bump a limit changes it", "bump the memory limit on the worker container to 2 GB", "container_update"},
	})
}

// A question reads a write's arguments as what it sets, not what it is
// about: "is the gym calendar hidden?" asks for the entry, not for the
// update that takes a hidden flag, while "hide the gym calendar" still
// finds the update. A POST named as a read takes filters, which count.
func TestSearchReadsAWritesArgumentsAsWhatItSets(t *testing.T) {
	const src = searchHead + `tools:
  - { name: calendar_list_get, description: Returns a calendar from the user's calendar list., input: { type: object, properties: { calendar_id: { type: string } }, required: [calendar_id] }, request: { upstream: up, method: GET, path: "/users/me/calendarList/{calendar_id}" } }
  - { name: calendar_list_patch, description: Updates an existing calendar on the user's calendar list., kind: write, gate: up_write, input: { type: object, properties: { calendar_id: { type: string }, hidden: { type: boolean, description: Whether the calendar has been hidden from the list. }, color_id: { type: string, description: The color of the calendar. } }, required: [calendar_id] }, request: { upstream: up, method: PATCH, path: "/users/me/calendarList/{calendar_id}" } }
  - { name: search_catalog_items, description: Finds items of the catalog., kind: write, gate: up_write, input: { type: object, properties: { category_ids: { type: array, description: The categories the items are in. } } }, request: { upstream: up, method: POST, path: /v2/catalog/search-catalog-items } }
  - { name: list_catalog, description: Returns a list of the catalog's objects., request: { upstream: up, method: GET, path: /v2/catalog/list } }
`
	core := searchCore(t, "sets.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"a question", "is the gym calendar hidden, and what color is it shown in?", "calendar_list_get"},
		{"an order", "hide the gym calendar and color it green", "calendar_list_patch"},
		{"a search by POST", "which items are in the pastries category?", "search_catalog_items"},
	})
}

// What chat users say: do not disturb is a setting, a thumbs-up a
// reaction, "remind me" makes a reminder, to post in #channel sends a
// message there, and people are added to a channel by invitation and
// removed by a kick.
func TestSearchKnowsWhatChatUsersSay(t *testing.T) {
	const src = searchHead + `tools:
  - { name: chat_post_message, description: Sends a message to a channel., kind: write, gate: up_write, input: { type: object, properties: { channel: { type: string }, text: { type: string } } }, request: { upstream: up, method: POST, path: /chat.postMessage } }
  - { name: chat_update, description: Updates a message., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /chat.update } }
  - { name: conversations_invite, description: Invites users to a channel., kind: write, gate: up_write, input: { type: object, properties: { channel: { type: string }, users: { type: string } } }, request: { upstream: up, method: POST, path: /conversations.invite } }
  - { name: conversations_kick, description: Removes a user from a conversation., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /conversations.kick } }
  - { name: conversations_leave, description: Leaves a conversation., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /conversations.leave } }
  - { name: conversations_rename, description: Renames a conversation., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /conversations.rename } }
  - { name: stars_add, description: Adds a star to an item., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /stars.add } }
  - { name: stars_remove, description: Removes a star from an item., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /stars.remove } }
  - { name: pins_add, description: Pins an item to a channel., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /pins.add } }
  - { name: reactions_add, description: Adds a reaction to an item., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /reactions.add } }
  - { name: reminders_delete, description: Deletes a reminder., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /reminders.delete } }
  - { name: reminders_info, description: Gets information about a reminder., request: { upstream: up, method: GET, path: /reminders.info } }
  - { name: reminders_add, description: Creates a reminder., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /reminders.add } }
  - { name: dnd_info, description: Retrieves a user's current Do Not Disturb status., request: { upstream: up, method: GET, path: /dnd.info } }
  - { name: search_messages, description: Searches for messages matching a query., request: { upstream: up, method: GET, path: /search.messages } }
`
	core := searchCore(t, "chat.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"do not disturb", "is Tom on do not disturb right now?", "dnd_info"},
		{"a thumbs-up", "thumbs up Maria's message", "reactions_add"},
		{"remind me", "remind me tomorrow at 9 to review the PR", "reminders_add"},
		{"post in a channel", "post the deploy summary in #releases", "chat_post_message"},
		{"add to a channel", "add Jorge and Mei to #design-review", "conversations_invite"},
		{"remove from a channel", "remove the ex-contractor from #finance", "conversations_kick"},
	})
}

// What listeners say: to play starts playback, to heart a song saves it.
func TestSearchKnowsWhatPlayersSay(t *testing.T) {
	const src = searchHead + `tools:
  - { name: get_currently_playing_track, title: Get Currently Playing Track, description: Get the object currently being played., request: { upstream: up, method: GET, path: /me/player/currently-playing } }
  - { name: get_recently_played, title: Get Recently Played Tracks, description: Get tracks from the user's recently played tracks., request: { upstream: up, method: GET, path: /me/player/recently-played } }
  - { name: get_album_tracks, title: Get Album Tracks, description: Get Spotify catalog information about an album's tracks., request: { upstream: up, method: GET, path: "/albums/{id}/tracks" }, input: { type: object, properties: { id: { type: string } }, required: [id] } }
  - { name: start_playback, title: Start/Resume Playback, description: Start a new context or resume current playback on the user's active device., kind: write, gate: up_write, request: { upstream: up, method: PUT, path: /me/player/play } }
  - { name: save_tracks, title: Save Tracks for Current User, description: Save one or more tracks to the current user's library., kind: write, gate: up_write, request: { upstream: up, method: PUT, path: /me/tracks } }
  - { name: get_profile, title: Get Current User's Profile, description: Get detailed profile information about the current user., request: { upstream: up, method: GET, path: /me } }
`
	core := searchCore(t, "players.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"play", "play Abbey Road from the very first track", "start_playback"},
		{"heart", "I love this one, heart it", "save_tracks"},
	})
}

// What developers say: a snippet is a gist, a job's console output its
// trace.
func TestSearchKnowsWhatDevelopersSay(t *testing.T) {
	const src = searchHead + `tools:
  - { name: gists_create, description: Allows you to add a new gist with one or more files., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /gists } }
  - { name: repos_create, description: Creates a new repository for the authenticated user., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /user/repos } }
  - { name: get_job, description: Get a single job of a project., input: { type: object, properties: { job_id: { type: string } }, required: [job_id] }, request: { upstream: up, method: GET, path: "/jobs/{job_id}" } }
  - { name: get_job_trace, description: Get a trace of a specific job of a project., input: { type: object, properties: { job_id: { type: string } }, required: [job_id] }, request: { upstream: up, method: GET, path: "/jobs/{job_id}/trace" } }
`
	core := searchCore(t, "developers.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"a snippet", "share a code snippet publicly", "gists_create"},
		{"console output", "job 7781 died with exit code 137, show me its console output", "get_job_trace"},
	})
}

// What analysts say: break a figure down (or split it) by a dimension,
// plot it over time, and ask for suggestions, which APIs call insights.
func TestSearchKnowsWhatAnalystsSay(t *testing.T) {
	const metric = `input: { type: object, properties: { metric_id: { type: string } }, required: [metric_id] }`
	const src = searchHead + `tools:
  - { name: list_dimension_values, description: Lists the values for a dimension along with a total count of related views., input: { type: object, properties: { dimension_id: { type: string } }, required: [dimension_id] }, request: { upstream: up, method: GET, path: "/data/v1/dimensions/{dimension_id}" } }
  - { name: list_breakdown_values, description: List the breakdown values for a specific metric., ` + metric + `, request: { upstream: up, method: GET, path: "/data/v1/metrics/{metric_id}/breakdown" } }
  - { name: get_overall_values, description: Returns the overall value for a specific metric and the total view count., ` + metric + `, request: { upstream: up, method: GET, path: "/data/v1/metrics/{metric_id}/overall" } }
  - { name: get_metric_timeseries_data, description: Returns timeseries data for a specific metric., ` + metric + `, request: { upstream: up, method: GET, path: "/data/v1/metrics/{metric_id}/timeseries" } }
  - { name: list_errors, description: Returns a list of errors., request: { upstream: up, method: GET, path: /data/v1/errors } }
  - { name: list_insights, description: Returns a list of insights for a metric., ` + metric + `, request: { upstream: up, method: GET, path: "/data/v1/metrics/{metric_id}/insights" } }
`
	core := searchCore(t, "analysts.yaml", src)
	wantFirsts(t, core, []firstCase{
		{"break down", "break down the views by country", "list_breakdown_values"},
		{"split by", "viewers split by browser", "list_breakdown_values"},
		{"plot", "plot the startup time per day", "get_metric_timeseries_data"},
		{"suggestions", "any suggestions for what drags the failure rate down?", "list_insights"},
	})
}

// What people say of the things of particular trades: a roster is a
// course's students; to screen someone is to run a screening; a
// permission a user gives is a consent; to disconnect is to unlink or
// remove. (A class asks for a course and a video for an asset too:
// TestWordsAskTheAPIsWords.)
func TestSearchKnowsWhatTradesSay(t *testing.T) {
	const course = `input: { type: object, properties: { course_id: { type: string } }, required: [course_id] }`
	const member = `input: { type: object, properties: { course_id: { type: string }, id: { type: string } }, required: [course_id, id] }`
	school := searchCore(t, "school.yaml", searchHead+`tools:
  - { name: courses_teachers_list, description: Returns a list of teachers of this course., `+course+`, request: { upstream: up, method: GET, path: "/v1/courses/{course_id}/teachers" } }
  - { name: courses_students_list, description: Returns a list of students of this course., `+course+`, request: { upstream: up, method: GET, path: "/v1/courses/{course_id}/students" } }
  - { name: courses_list, description: "Returns a list of courses that the requesting user is permitted to view, restricted to those that match the request. Returns an empty response if none match.", request: { upstream: up, method: GET, path: /v1/courses } }
  - { name: courses_students_delete, description: Deletes a student of a course., kind: write, gate: up_write, `+member+`, request: { upstream: up, method: DELETE, path: "/v1/courses/{course_id}/students/{id}" } }
  - { name: courses_teachers_delete, description: Deletes a teacher of a course., kind: write, gate: up_write, `+member+`, request: { upstream: up, method: DELETE, path: "/v1/courses/{course_id}/teachers/{id}" } }
  - { name: courses_delete, description: Deletes a course., kind: write, gate: up_write, `+course+`, request: { upstream: up, method: DELETE, path: "/v1/courses/{course_id}" } }
`)
	wantFirsts(t, school, []firstCase{
		{"roster", "drop Marcus from the roster", "courses_students_delete"},
		{"enrolled", "who is enrolled in course 7?", "courses_students_list"},
	})
	bank := searchCore(t, "bank.yaml", searchHead+`tools:
  - { name: watchlist_screening_individual_list, description: List previously created watchlist screenings for individuals., request: { upstream: up, method: POST, path: /watchlist_screening/individual/list } }
  - { name: watchlist_screening_individual_create, description: Create a new watchlist screening to check a customer against sanctions lists., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /watchlist_screening/individual/create } }
  - { name: payment_initiation_payment_create, description: Create a payment., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /payment_initiation/payment/create } }
  - { name: payment_initiation_consent_create, description: Create a payment consent which can be used to initiate payments., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /payment_initiation/consent/create } }
  - { name: item_get, description: Retrieve information about the status of an Item., request: { upstream: up, method: POST, path: /item/get } }
  - { name: item_remove, description: Remove an Item and invalidate its access token., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /item/remove } }
  - { name: item_webhook_update, description: Update the webhook URL of an Item., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /item/webhook/update } }
`)
	wantFirsts(t, bank, []firstCase{
		{"screen", "screen Jane Smith, born 1975", "watchlist_screening_individual_create"},
		{"permission", "create a standing permission for recurring payments", "payment_initiation_consent_create"},
		{"disconnect", "disconnect the customer's bank item", "item_remove"},
	})
}

// Initials no tool's words use are read as the name words they spell:
// a PVC is a persistent volume claim, a PDB a pod disruption budget.
func TestSearchSpellsOutInitials(t *testing.T) {
	core := searchCore(t, "kube.yaml", searchHead+`tools:
  - { name: list_core_v1_namespaced_pod, description: list or watch objects of kind Pod, request: { upstream: up, method: GET, path: /api/v1/pods } }
  - { name: list_core_v1_persistent_volume, description: list or watch objects of kind PersistentVolume, request: { upstream: up, method: GET, path: /api/v1/persistentvolumes } }
  - { name: list_core_v1_persistent_volume_claim_for_all_namespaces, description: list or watch objects of kind PersistentVolumeClaim, request: { upstream: up, method: GET, path: /api/v1/persistentvolumeclaims } }
  - { name: list_policy_v1_pod_disruption_budget_for_all_namespaces, description: list or watch objects of kind PodDisruptionBudget, request: { upstream: up, method: GET, path: /apis/policy/v1/poddisruptionbudgets } }
  - { name: read_core_v1_namespaced_persistent_volume_claim, description: read the specified PersistentVolumeClaim, input: { type: object, properties: { name: { type: string } }, required: [name] }, request: { upstream: up, method: GET, path: "/api/v1/persistentvolumeclaims/{name}" } }
  - { name: read_policy_v1_namespaced_pod_disruption_budget, description: read the specified PodDisruptionBudget, input: { type: object, properties: { name: { type: string } }, required: [name] }, request: { upstream: up, method: GET, path: "/apis/policy/v1/poddisruptionbudgets/{name}" } }
`)
	wantFirsts(t, core, []firstCase{
		{"pvc", "is PVC data-0 bound?", "read_core_v1_namespaced_persistent_volume_claim"},
		{"pdb", "show the PDB of zookeeper", "read_policy_v1_namespaced_pod_disruption_budget"},
	})
}

// Two words an API runs together are asked for as it writes them: a
// to-watch list is its watchlist.
func TestSearchRunsWordsTogether(t *testing.T) {
	core := searchCore(t, "media.yaml", searchHead+`tools:
  - { name: add_items_to_personal_list, description: Add one or more items to a personal list., kind: write, gate: up_write, input: { type: object, properties: { id: { type: string } }, required: [id] }, request: { upstream: up, method: POST, path: "/users/me/lists/{id}/items" } }
  - { name: add_items_to_watched_history, description: Add items to the watched history., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /sync/history } }
  - { name: add_items_to_collection, description: Add items to the collection., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /sync/collection } }
  - { name: add_items_to_watchlist, description: Add one of more items to the watchlist., kind: write, gate: up_write, request: { upstream: up, method: POST, path: /sync/watchlist } }
`)
	// A list of one's own is a list too: the watchlist comes next to it,
	// before the history and the collection.
	found, err := core.SearchCatalog(proxy.SearchQuery{Query: "put Dune on my to-watch list so I don't forget it", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if names := listedNames(found); !slices.Contains(names, "add_items_to_watchlist") {
		t.Errorf("a to-watch list found %v, want add_items_to_watchlist in the first two", names)
	}
}
