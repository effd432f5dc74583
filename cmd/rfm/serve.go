package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"syscall"
	"time"

	"github.com/rfmkit/rfm/internal/cli"
	"github.com/rfmkit/rfm/serve"
)

type serveOptions struct {
	model, addr                     string
	maxBody, memoryBudget           string
	maxRows, maxInFlight, batchRows int
	batchSlice                      int
	batchWait, watch, shutdown      string
	headerTimeout, readTimeout      string
	writeTimeout, idleTimeout       string
	logJSON                         bool
	tlsCert, tlsKey, authTokens     string
	authProbes, allowSchemaChange   bool
	common                          commonFlags
}

func serveFlags(o *serveOptions) *flagSet {
	f := helpFlagSet("serve", "rfm serve --model FILE [--addr 127.0.0.1:8080] [flags]")
	f.Section("Input")
	f.String(&o.model, "model", "", "model `FILE` written by 'rfm fit'")
	f.String(&o.addr, "addr", "127.0.0.1:8080", "listen on `HOST:PORT` (\":8080\" for every interface)")
	f.Section("Limits")
	f.String(&o.maxBody, "max-body", "8M", "largest request body (`SIZE`); larger gets 413")
	f.Int(&o.maxRows, "max-rows", 10000, "most rows in one request (`N`); more gets 413")
	f.Int(&o.maxInFlight, "max-in-flight", 256, "most predict requests predicted at once (`N`; a request takes a slot once its body is read); more get 503 and Retry-After")
	f.String(&o.memoryBudget, "memory-budget", "auto", "memory (`SIZE`) for all the requests being read, decoded and predicted; over it they get 503 (auto: 1/16 of the available memory, 64M to 256M)")
	f.String(&o.headerTimeout, "header-timeout", "5s", "time to read a request's headers (`DURATION`); a slower client is disconnected")
	f.String(&o.readTimeout, "read-timeout", "30s", "time to read a whole request (`DURATION`)")
	f.String(&o.writeTimeout, "write-timeout", "60s", "time to write an answer (`DURATION`)")
	f.String(&o.idleTimeout, "idle-timeout", "120s", "keep-alive connection idle time (`DURATION`)")
	f.String(&o.shutdown, "shutdown-timeout", "30s", "on SIGTERM, wait this long (`DURATION`) for requests in flight")
	f.Section("Security")
	f.String(&o.tlsCert, "tls-cert", "", "serve HTTPS with this certificate chain (`FILE`, PEM); needs --tls-key")
	f.String(&o.tlsKey, "tls-key", "", "the certificate's private key (`FILE`, PEM)")
	f.String(&o.authTokens, "auth-tokens", "", "require a bearer token from this `FILE` (one per line, at least 16 bytes; # comments) for /v1/predict and /v1/model")
	f.Bool(&o.authProbes, "auth-probes", false, "require a token for /healthz, /readyz and /metrics too")
	f.Bool(&o.allowSchemaChange, "allow-schema-change", false, "let a reload swap in a model with another task, other input columns or other classes (refused by default)")
	f.Section("Batching and reloads")
	f.String(&o.batchWait, "batch-wait", "1ms", "longest wait (`DURATION`) for more requests to share a kernel evaluation")
	f.Int(&o.batchRows, "batch-rows", 4096, "most rows (`N`) in one kernel evaluation")
	f.Int(&o.batchSlice, "batch-slice", 0, "rows (`N`) of a large request predicted per evaluation, the shortest first, small requests served first (0: sized by the model, about 16 M multiply-adds, at most --batch-rows/16; -1: none, first come, first served)")
	f.String(&o.watch, "watch", "0", "check the model file every `DURATION` and reload it when it changes (0: only on SIGHUP)")
	f.Section("Output")
	f.Bool(&o.logJSON, "log-json", false, "log JSON lines instead of text")
	o.common.add(f, "threads")
	return f
}

func cmdServe(e *env, args []string) error {
	var o serveOptions
	f := serveFlags(&o)
	if _, err := f.Parse(args, e.stderr); err != nil {
		return err
	}
	if err := o.common.apply(); err != nil {
		return err
	}
	if o.model == "" {
		return usagef("--model is required: the model file written by 'rfm fit'")
	}
	opt := serve.Options{ModelPath: o.model, MaxRows: o.maxRows, MaxInFlight: o.maxInFlight, BatchRows: o.batchRows, BatchSlice: o.batchSlice}
	if o.batchSlice < -1 {
		return usagef("--batch-slice %d: want 0 (sized by the model), -1 (none: first come, first served) or a number of rows", o.batchSlice)
	}
	b, err := cli.ParseBytes(o.maxBody)
	if err != nil || b == 0 {
		return usagef("--max-body %q: want a size such as 512K or 8M", o.maxBody)
	}
	opt.MaxBodyBytes = int64(b)
	if o.memoryBudget != "auto" {
		b, err := cli.ParseBytes(o.memoryBudget)
		if err != nil || b < 1<<20 {
			return usagef("--memory-budget %q: want auto or a size of at least 1M, such as 512M or 2G", o.memoryBudget)
		}
		opt.MemoryBudget = int64(b)
	}
	for _, c := range []struct {
		flag, v string
		dst     *time.Duration
		zeroOK  bool
	}{
		{"batch-wait", o.batchWait, &opt.BatchWait, true}, {"watch", o.watch, &opt.WatchInterval, true},
		{"shutdown-timeout", o.shutdown, &opt.ShutdownTimeout, false}, {"header-timeout", o.headerTimeout, &opt.ReadHeaderTimeout, false},
		{"read-timeout", o.readTimeout, &opt.ReadTimeout, false}, {"write-timeout", o.writeTimeout, &opt.WriteTimeout, false},
		{"idle-timeout", o.idleTimeout, &opt.IdleTimeout, false},
	} {
		d, err := time.ParseDuration(c.v)
		if c.v == "0" {
			d, err = 0, nil
		}
		if err != nil || d < 0 || (d == 0 && !c.zeroOK) {
			return usagef("--%s %q: want a positive duration such as 500ms, 5s or 2m", c.flag, c.v)
		}
		*c.dst = d
		if c.flag == "batch-wait" && d == 0 {
			*c.dst = -1 // no waiting (0 would take the default)
		}
	}
	for _, c := range []struct {
		flag string
		v    int
	}{{"max-rows", o.maxRows}, {"max-in-flight", o.maxInFlight}, {"batch-rows", o.batchRows}} {
		if c.v < 1 {
			return usagef("--%s %d: must be at least 1", c.flag, c.v)
		}
	}
	var h slog.Handler = slog.NewTextHandler(e.stderr, nil)
	if o.logJSON {
		h = slog.NewJSONHandler(e.stderr, nil)
	}
	opt.Logger = slog.New(h)
	opt.TLSCertFile, opt.TLSKeyFile = o.tlsCert, o.tlsKey
	opt.AuthProbes, opt.AllowSchemaChange = o.authProbes, o.allowSchemaChange
	if o.authProbes && o.authTokens == "" {
		return usagef("--auth-probes needs --auth-tokens")
	}
	if o.authTokens != "" {
		if opt.Tokens, err = serve.ReadTokens(o.authTokens); err != nil {
			return fmt.Errorf("--auth-tokens: %w", err)
		}
	}
	s, err := serve.New(opt)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Err != nil {
			err = oe.Err
		}
		return fmt.Errorf("--addr %s: cannot listen: %v", o.addr, err)
	}
	reload, stop := cli.Relay(syscall.SIGHUP)
	defer stop()
	return s.Serve(e.ctx, ln, reload)
}
