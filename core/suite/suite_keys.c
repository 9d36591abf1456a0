/* The keys of a suite's [suite] section: the same table validates suite
 * files, fills defaults and prints `dlbench plugin-help suite`. */
#include "suite/param.h"
#include "suite/suite.h"

#define MIN_ DLB_PARAM_HAS_MIN
#define MAX_ DLB_PARAM_HAS_MAX
#define XMIN_ (DLB_PARAM_HAS_MIN | DLB_PARAM_MIN_EXCLUSIVE)
#define FIXED_ DLB_PARAM_NO_SWEEP

static const char *const modes[] = {"train", "infer", NULL};
static const char *const datasets[] = {"auto", "fashion-mnist", "synthetic",
                                       NULL};
static const char *const mallocs[] = {"steady", "fresh", "glibc", NULL};
static const char *const backends[] = {"ref", "cpu", "cuda", NULL};
static const char *const objectives[] = {"throughput", "latency",
                                         "time_to_accuracy", NULL};
static const char *const cudnn_algos[] = {"heuristic", "search", NULL};
static const char *const profiles[] = {"off", "ops", NULL};

const struct dlb_param_def dlb_suite_keys[] = {
    {"name", DLB_PARAM_STRING, "", FIXED_, 0, 0, NULL, NULL,
     "suite name in results and reports; default: the file's base name"},
    {"description", DLB_PARAM_STRING, "", FIXED_, 0, 0, NULL, NULL,
     "one line on what the suite asks"},
    {"mode", DLB_PARAM_ENUM, "train", 0, 0, 0, modes, NULL,
     "measure training steps or inference"},
    {"workload", DLB_PARAM_STRING, "cnn", 0, 0, 0, NULL, NULL,
     "\"cnn\": the built-in reference CNN, or the name of a plugin that "
     "provides a workload"},
    {"model", DLB_PARAM_STRING, "lenet", 0, 0, 0, NULL, NULL,
     "network description: suites/models/NAME.ini"},
    {"dataset", DLB_PARAM_ENUM, "auto", 0, 0, 0, datasets, NULL,
     "auto: Fashion-MNIST when installed, else synthetic data"},
    {"dataset_path", DLB_PARAM_STRING, "/usr/share/datasets/fashion-mnist", 0,
     0, 0, NULL, NULL, "directory of the Fashion-MNIST IDX files"},
    {"augment", DLB_PARAM_BOOL, "off", 0, 0, 0, NULL, NULL,
     "random horizontal flip and random crop with 2 pixels of padding on "
     "training batches (off: normalisation only, as common LeNet recipes)"},
    {"backend", DLB_PARAM_ENUM, "cpu", 0, 0, 0, backends, NULL,
     "ref: plain C oracle, cpu: oneDNN, cuda: cuDNN/cuBLAS"},
    {"batch", DLB_PARAM_INT, "64", MIN_ | MAX_, 1, 1048576, NULL, "images",
     "mini-batch size"},
    {"threads", DLB_PARAM_INT, "0", MIN_ | MAX_, 0, 4096, NULL, "threads",
     "CPU threads; 0 = all cores"},
    {"malloc", DLB_PARAM_ENUM, "steady", 0, 0, 0, mallocs, NULL,
     "the system allocator's thresholds in each configuration's process "
     "(core/child/child_controls.h): steady (every block, however large, "
     "reuses the heap's pages step after step, the heap is never trimmed), fresh "
     "(every block of 128 KiB or more is mmap'ed anew: each step faults "
     "its pages in) or glibc (glibc's adaptive thresholds, which differ "
     "from process to process)"},
    /* Options of the cuda backend (suite_backend.c refuses them on other
     * backends). Dotted names, so that they read as the backend's. */
    {"cudnn.algo", DLB_PARAM_ENUM, "heuristic", 0, 0, 0, cudnn_algos, NULL,
     "backend = cuda: convolution algorithms from cuDNN's heuristic, or "
     "timed by search (the choices cached on disk per GPU, cuDNN version "
     "and shape)"},
    {"cuda.tf32", DLB_PARAM_BOOL, "off", 0, 0, 0, NULL, NULL,
     "backend = cuda: TF32 tensor cores for fp32 convolutions and GEMMs"},
    {"cuda.graphs", DLB_PARAM_BOOL, "off", 0, 0, 0, NULL, NULL,
     "backend = cuda, mode = train: capture one training step into a CUDA "
     "graph after a warm-up step and replay it every step"},
    {"profile", DLB_PARAM_ENUM, "off", 0, 0, 0, profiles, NULL,
     "ops: the record's profile lists, per layer and operation, the "
     "kernel that ran, its calls and its time per measured step; each "
     "operation is timed alone, the device waited for after it (which "
     "slows a GPU's step: the profile says where time goes)"},
    {"lr", DLB_PARAM_FLOAT, "0.01", XMIN_, 0, 0, NULL, NULL,
     "SGD learning rate"},
    {"momentum", DLB_PARAM_FLOAT, "0.9", MIN_ | MAX_, 0, 1, NULL, NULL,
     "SGD momentum"},
    {"train_steps", DLB_PARAM_INT, "0", MIN_, 0, 0, NULL, "steps",
     "training steps before accuracy is measured; 0 = measure only"},
    {"train_samples", DLB_PARAM_INT, "0", MIN_, 0, 0, NULL, "images",
     "training budget in images instead of steps: each configuration "
     "trains ceil(train_samples / batch) steps, so that configurations of "
     "different batch sizes train on as many images and their accuracies "
     "compare; 0 = use train_steps"},
    {"measure_only", DLB_PARAM_BOOL, "off", 0, 0, 0, NULL, NULL,
     "speed figures only: no training run, no accuracy evaluation, and "
     "plugins skip work that serves only those (prune's fine-tuning); "
     "search = halving sets it in its speed-only screening rounds (set by "
     "hand, the winner is chosen on speed alone: no accuracy to check the "
     "constraint on)"},
    {"screen_accuracy", DLB_PARAM_BOOL, "off", 0, 0, 0, NULL, NULL,
     "with measure_only in mode = infer: the accuracy is evaluated all the "
     "same, on 2,000 test images (plugins still skip their own quality "
     "figures); search = halving sets it in its first screening round, "
     "since without training the accuracy does not depend on the budget, "
     "so configurations that break the accuracy constraint by more than "
     "the subset's sampling error drop out there"},
    {"steps_per_sample", DLB_PARAM_INT, "1", MIN_, 1, 0, NULL, "steps",
     "steps timed together as one sample"},
    {"warmup", DLB_PARAM_TIME, "0.2s", MIN_, 0, 0, NULL, "s",
     "minimum warm-up before sampling"},
    {"warmup_max", DLB_PARAM_TIME, "5s", MIN_, 0, 0, NULL, "s",
     "warm-up ends here even if step times have not settled"},
    {"min_samples", DLB_PARAM_INT, "10", MIN_, 2, 0, NULL, "samples",
     "samples taken at least"},
    {"max_samples", DLB_PARAM_INT, "100000", MIN_, 2, 0, NULL, "samples",
     "samples taken at most"},
    {"ci_target", DLB_PARAM_FLOAT, "0.01",
     XMIN_ | MAX_ | DLB_PARAM_MAX_EXCLUSIVE, 0, 1, NULL, "fraction",
     "stop when the 95% CI half-width of the median is within this fraction"},
    {"time_cap", DLB_PARAM_TIME, "10s", XMIN_, 0, 0, NULL, "s",
     "measurement stops here even if not converged"},
    {"timeout", DLB_PARAM_TIME, "300s", XMIN_, 0, 0, NULL, "s",
     "a configuration still running is killed, status timeout"},
    {"memory_limit", DLB_PARAM_SIZE, "0", MIN_, 0, 0, NULL, "bytes",
     "address-space limit of the configuration's process, 0 = none; "
     "exceeding it gives status oom"},
    {"seed", DLB_PARAM_INT, "42", MIN_, 0, 0, NULL, NULL,
     "seed of weights, shuffling and synthetic data"},
    {"launcher", DLB_PARAM_STRING, "", FIXED_, 0, 0, NULL, NULL,
     "how configurations that run as several processes (dp and mp engines "
     "mpi and nccl) start their ranks, {ranks} standing for the count: \"srun -n "
     "{ranks}\", \"mpirun -np {ranks} --hostfile hosts\"; \"\" = "
     "DLBENCH_LAUNCHER, else mpirun on this host. Command line only "
     "(--launcher or --set): a suite file cannot name a program to run"},
    {"plugins", DLB_PARAM_STRING, "", FIXED_, 0, 0, NULL, NULL,
     "comma-separated list of plugins to activate even without a section"},
    {"accuracy_tolerance", DLB_PARAM_FLOAT, "0.5", MIN_, 0, 0, NULL, "points",
     "largest accuracy drop against the baseline a winner may have"},
    /* Selection (core/select/select.c): what "best" means for the suite. One
     * objective per suite, so none of these may be swept. */
    {"objective", DLB_PARAM_ENUM, "throughput", FIXED_, 0, 0, objectives,
     NULL, "what the winner is best at: throughput (samples/s), latency "
     "(median step time) or time_to_accuracy (time to target_accuracy)"},
    {"baseline", DLB_PARAM_STRING, "", FIXED_, 0, 0, NULL, NULL,
     "the configuration others are compared with, as axis values "
     "(\"batch=64 amp.enable=off\"); \"\" = the plan's first"},
    {"workload_axes", DLB_PARAM_STRING, "", FIXED_, 0, 0, NULL, NULL,
     "the keys that define the workload, never compared across: the "
     "selection picks one winner per combination of their values, against "
     "that group's own baseline (\"model, batch\"); \"none\" = every "
     "axis is a setting to tune; \"\" = mode, workload, model, dataset, "
     "dataset_path, augment, lr, momentum, train_steps, train_samples, "
     "seed, and batch unless objective = throughput"},
    {"memory_budget", DLB_PARAM_SIZE, "0", FIXED_ | MIN_, 0, 0, NULL, "bytes",
     "largest peak memory (peak_rss, a pool's reserved_peak or a GPU's "
     "device_mem_held_peak) a winner may have; 0 = none"},
    {"target_accuracy", DLB_PARAM_FLOAT, "0", FIXED_ | MIN_ | MAX_, 0, 100,
     NULL, "%", "accuracy that objective = time_to_accuracy must reach"},
    {"search", DLB_PARAM_STRING, "grid", FIXED_, 0, 0, NULL, NULL,
     "which configurations run: grid (all), random:N (a seeded subset of N) "
     "or halving (successive halving)"},
    {"repetitions", DLB_PARAM_INT, "1", FIXED_ | MIN_ | MAX_, 1, 100, NULL,
     NULL, "processes each configuration runs in, in passes over the round "
     "(every configuration once, then again), its samples pooled: a machine "
     "whose speed changes in phases then measures every configuration in "
     "several; the later ones run measure_only"},
    {"significance", DLB_PARAM_FLOAT, "0.05",
     FIXED_ | XMIN_ | MAX_ | DLB_PARAM_MAX_EXCLUSIVE, 0, 1, NULL, NULL,
     "Mann-Whitney p-value below which a difference from the winner counts"},
    {"remeasure_doubtful", DLB_PARAM_INT, "0", FIXED_ | MIN_ | MAX_, 0, 10,
     NULL, NULL, "a configuration measured doubtful (preempted or robbed "
     "of CPU time while it ran) runs again, up to this many more times, at "
     "the end of its round; the first figure not doubtful stands, else the "
     "least disturbed one, and the record says what was re-measured"},
    {"accuracy_seeds", DLB_PARAM_INT, "1", FIXED_ | MIN_ | MAX_, 1, 100, NULL,
     NULL, "seeds each configuration is trained and scored from (seed, seed "
     "+ 1, ...: the same list for every configuration, so that the accuracy "
     "change against the baseline is a paired difference with an interval "
     "over the seeds); the speed is measured once, in the first seed's "
     "process"},
    {"accuracy_noise", DLB_PARAM_FLOAT, "0", FIXED_ | MIN_, 0, 0, NULL, "points",
     "the standard deviation of one paired accuracy difference between "
     "seeds, measured once and written down: with accuracy_seeds = 1 a "
     "change is a gain or a loss only beyond it (0: not known: one seed "
     "calls no change a gain or a loss)"},
    {"peak_max_age", DLB_PARAM_TIME, "12h", FIXED_ | XMIN_, 0, 0, NULL, "s",
     "the roofline (dlbench info --peak) is probed again before the run "
     "when the cached probe is older than this"},
    {"peak_tolerance", DLB_PARAM_FLOAT, "0.1", FIXED_ | XMIN_ | MAX_, 0, 1,
     NULL, NULL, "... or when a quick check of the fp32 peak before the run "
     "differs from the cached probe's by more than this share"},
};

const unsigned dlb_suite_n_keys =
    sizeof dlb_suite_keys / sizeof dlb_suite_keys[0];
