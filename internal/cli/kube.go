package cli

import (
	"context"
	"flag"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/bench"
	"github.com/servebench/servebench/internal/kube"
	"github.com/servebench/servebench/internal/load"
)

const kubeUsage = `
Usage: servebench kube job [run flags] --workers N --image IMAGE (--claim PVC | --host-path DIR)

Prints a Kubernetes Indexed Job that runs servebench run as N workers, each
its shard of the load (--shard $(JOB_COMPLETION_INDEX)/N), all starting
their first load point at one mark (--start-at, --start-in from now), each
writing its run directory to worker-I on the results volume. Pipe it to
kubectl apply -f -; when the Job is Complete (or Failed: a failed worker is
not retried and does not stop the others), copy the directories out and
merge them with servebench report DIR0 DIR1 ..., which names any worker
that did not finish (docs/DISTRIBUTED.md).

Every run flag is passed to the workers as given, except --out, --shard and
--start-at, which the Job sets. Files named by run flags (--ca-cert,
--dataset, --objective files) must exist inside the image or the volume.

Credentials never go in the workers' arguments, which anyone who can read
Pods sees. The value of a credential header (Authorization, X-Api-Key,
Cookie, ...) and the user:password of --url and the telemetry URLs go to a
Secret, printed before the Job (NAME-credentials), or one of yours given
with --credentials-secret, holding the keys kube job names; the arguments
refer to them as $(VAR). The API key goes through --api-key-secret: an API
key in $SERVEBENCH_API_KEY (--api-key-env) without it is an error.

Examples:
  servebench kube job --url http://vllm.default.svc:8000 --model M --concurrency 64,256 \
      --duration 60s --workers 8 --image registry.example/servebench:1 --claim bench-results \
      | kubectl apply -f -
  servebench kube job --url http://llm:8000 --model M --rate 200 --requests 20000 --workers 4 \
      --image servebench:1 --host-path /var/tmp/servebench --name rate200
  kubectl create secret generic llm-key --from-literal=api-key="$SERVEBENCH_API_KEY"
  servebench kube job --url https://llm.example --model M --concurrency 64 --duration 60s \
      --api-key-secret llm-key --workers 4 --image servebench:1 --claim bench-results
`

// kubeFlags are kube job's own flags; every other flag is run's.
type kubeFlags struct {
	kube.Options
	startIn time.Duration
}

// kubeOwnFlags are the flags kube job reads itself; the rest go to run.
var kubeOwnFlags = map[string]bool{"workers": true, "image": true, "name": true, "namespace": true,
	"claim": true, "host-path": true, "start-in": true, "api-key-secret": true, "credentials-secret": true}

// jobFlagsSet are run flags the Job sets for each worker.
var jobFlagsSet = map[string]bool{"out": true, "shard": true, "start-at": true}

// defaultStartIn leaves a Job's pods time to be scheduled, pull the image
// and prepare their requests before the mark.
const defaultStartIn = 2 * time.Minute

func (k *kubeFlags) define(fs *flag.FlagSet) {
	fs.IntVar(&k.Workers, "workers", 0, "how many workers (pods) share the load")
	fs.StringVar(&k.Image, "image", "", "container image holding servebench as /servebench (see Dockerfile)")
	fs.StringVar(&k.Name, "name", "servebench", "the Job's name (and its results directory's)")
	fs.StringVar(&k.Namespace, "namespace", "", "the Job's namespace (default: kubectl's)")
	fs.StringVar(&k.Claim, "claim", "", "a ReadWriteMany PersistentVolumeClaim every worker writes its run directory to")
	fs.StringVar(&k.HostPath, "host-path", "", "a directory on each node for the workers' run directories (instead of --claim)")
	fs.StringVar(&k.APIKeySecret, "api-key-secret", "", "a Secret whose key api-key becomes the workers' --api-key-env variable")
	fs.StringVar(&k.CredentialsSecret, "credentials-secret", "", "an existing Secret holding the credentials of --header and URLs, under the keys kube job names (default: print one, NAME-credentials, before the Job)")
	fs.DurationVar(&k.startIn, "start-in", defaultStartIn, "the start mark, from now, when --start-at is not given")
}

// kubeJobRequired are the flags a kube job needs, for the Try line of an
// error of run's flags met here (hintAs); its own checks, some of which
// send the user to run, keep theirs.
const kubeJobRequired = "--url URL --workers 4 --image IMAGE --claim PVC"

func kubeCmd(ctx context.Context, env *Env, args []string) error {
	if len(args) > 0 && isHelpArg(args[0]) {
		args = []string{"job", args[0]} // kube's one subcommand's help is kube's
	}
	if len(args) == 0 || args[0] != "job" {
		return usagef("servebench kube job --url URL --workers 4 --image IMAGE --claim PVC", "kube has one subcommand: job")
	}
	args = args[1:]
	fs := newFlagSet(env, "kube job", kubeUsage)
	var f runFlags
	var k kubeFlags
	f.define(fs)
	k.define(fs)
	if err := parseFlags(fs, args); err != nil {
		return hintAs(err, "kube job", kubeJobRequired)
	}
	if fs.NArg() > 0 {
		return usagef("servebench kube job -h", "unexpected argument %q", fs.Arg(0))
	}
	key := ""
	if f.apiKeyEnv != "" {
		key = env.Getenv(f.apiKeyEnv)
	}
	// No error kube job prints shows a credential the workers get.
	if t, err := backend.NewTarget(backend.TargetOptions{URL: f.url, APIKey: key, Header: f.headers.h}); err == nil {
		env.redactors = append(env.redactors, t.Redactor())
	}
	env.redactors = append(env.redactors, f.tel.redactor())
	k.APIKeyEnv = f.apiKeyEnv
	if err := k.check(fs, &f); err != nil {
		return err
	}
	if err := k.CheckAPIKey(key); err != nil {
		return err
	}
	if err := k.checkLoad(&f); err != nil {
		return err
	}
	isBool := func(name string) bool {
		b, ok := fs.Lookup(name).Value.(interface{ IsBoolFlag() bool })
		return ok && b.IsBoolFlag()
	}
	k.SetRunArgs(kube.WorkerArgs(args, func(name string) bool { return kubeOwnFlags[name] }, isBool), flagSet(fs, "db") || flagSet(fs, "no-history"))
	return kube.Print(env.Stdout, env.Stderr, &k.Options)
}

// check refuses a Job that could not run as asked.
func (k *kubeFlags) check(fs *flag.FlagSet, f *runFlags) error {
	const hint = "servebench kube job --url http://SERVER:8000 --model M --workers 4 --image IMAGE --claim PVC"
	if err := k.Check(); err != nil {
		return err // a *kube.OptionError, with its hint
	}
	switch {
	case f.url == "":
		return usagef(hint, "--url: the workers load a server they reach over the network (the built-in simulator is per process)")
	case f.slo.active():
		return usagef(hint+"; then servebench report --objective NAME DIR0 DIR1 ...", "objectives judge the merged run: drop --objective/--slo/--find-capacity here and give them to report")
	case f.trace.o.Path != "":
		return usagef(traceHint, "--trace replays a trace from one process: run it with servebench run, not as a Job's workers")
	case f.live.addr.on:
		return usagef(hint, "--live: a worker's live view would be on its pod's own loopback; follow the workers with kubectl logs")
	}
	var bad []string
	fs.Visit(func(fl *flag.Flag) {
		if jobFlagsSet[fl.Name] && (fl.Name != "start-at") {
			bad = append(bad, "--"+fl.Name)
		}
	})
	if len(bad) > 0 {
		return usagef(hint, "%s: the Job sets it for each worker", strings.Join(bad, ", "))
	}
	return nil
}

// checkLoad refuses a load that the workers would each refuse, so that
// no Job starts only to fail in every pod: points that cannot be split, or
// several points with marks that nothing spaces. It sets the start mark.
func (k *kubeFlags) checkLoad(f *runFlags) error {
	k.StartAt = kube.StartMark(f.shard.startAt, k.startIn, time.Now())
	plan, err := f.plan(nil)
	if err != nil {
		return hintAs(err, "kube job", kubeJobRequired)
	}
	f.shard.shard = load.Shard{Index: 0, Count: k.Workers}
	if err := f.shard.checkPoints(plan.Points); err != nil {
		return err
	}
	// The target's time scale is not known here: real time.
	_, err = bench.StartEvery(bench.Setup{Points: plan.Points, StartAt: k.StartAt, StartEvery: f.shard.startEvery, Grace: f.grace}, 0)
	return benchError(err)
}
