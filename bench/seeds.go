package bench

import (
	"context"
	"fmt"
	"io"
)

// RunLearningSeeds runs the learning benchmark once per seed, each seed
// three times: clean thumbs, thumbs a hostile rater flips at poison, and
// the plain corpus without misleading memories. opt.Seed, Mix, Poison and
// Prefix are set per run; progress (nil: none) gets a line per run done.
func RunLearningSeeds(ctx context.Context, svc Services, opt LearningOptions, seeds []int, poison float64, progress io.Writer) ([]LearningSeed, error) {
	mix := opt.Mix
	var out []LearningSeed
	for _, seed := range seeds {
		opt.Seed = uint64(seed)
		s := LearningSeed{Seed: uint64(seed)}
		for _, run := range []struct {
			name   string
			out    **LearningRun
			mix    Mix
			poison float64
		}{{"clean", &s.Clean, mix, 0}, {"poisoned", &s.Poisoned, mix, poison}, {"plain", &s.Plain, Mix{}, 0}} {
			opt.Mix, opt.Poison, opt.Prefix = run.mix, run.poison, fmt.Sprintf("learning%d-%s-", seed, run.name)
			var err error
			if *run.out, err = RunLearning(ctx, svc, opt); err != nil {
				return nil, err
			}
			if progress != nil {
				fmt.Fprintf(progress, "seed %d %s done\n", seed, run.name)
			}
		}
		out = append(out, s)
	}
	return out, nil
}
