/*
 * codefu-sandbox-exec: run one program under limits, then report how it ended.
 *
 * Built once per machine by codefu_sandbox.sandbox_binary (gcc, no extra libraries). Python
 * spawns it (no preexec_fn: safe from threaded processes such as Ray workers). It forks
 * once: the child confines itself and execs the target; the parent waits with a
 * CPU-time and a wall-clock deadline, kills the process group, reaps every descendant
 * and prints one line on stdout.
 *
 * Why fork here rather than confine-and-exec sandbox-exec itself: Linux keeps the
 * largest RSS a process ever had across exec (signal->maxrss), and sandbox-exec was
 * vforked from Python, so its own ru_maxrss includes the Python process's peak. The
 * child of this ~1 MB static sandbox-exec starts from sandbox-exec's tiny footprint:
 *
 *   ok EXIT SIGNAL UTIME_US STIME_US MAXRSS_KB WALL_US KILLED REFUSED
 *   error MESSAGE
 *
 * KILLED: 0 not killed, 1 CPU deadline, 2 wall deadline. REFUSED: the x86-64 number of the
 * system call the seccomp filter refused, for which sandbox-exec killed the program (SIGKILL);
 * -2 for a refused call whose number it could not read; -1 none.
 *
 * With --serve 1 it runs many programs, one at a time (a judged submission's tests): it
 * joins the memory cgroup once itself, so its children are born in it (writing to
 * cgroup.procs takes the kernel's cgroup write lock, which waits for an RCU grace period:
 * milliseconds per test on a busy host), then reads one line per run on stdin, the
 * per-run options as TAB-separated "--option<TAB>value" pairs (--stdin, --stdout,
 * --stderr, --cwd, --ro, --rw), runs it exactly as a single launch would and prints its
 * result line; it exits at end of input. The server keeps itself out of the OOM killer's
 * choice (oom_score_adj -1000); each child puts its own back to 0 first.
 *
 * Child confinement, in order: new session (own process group, no controlling terminal),
 * die with sandbox-exec, optional memory cgroup (joined by writing its pid to the given
 * cgroup.procs), stdio from files opened before privileges are dropped, optional network
 * and IPC namespaces, cwd, rlimits, setgroups/setgid/setuid, no_new_privs, Landlock (file
 * system; network and signal scoping when the kernel has them), seccomp (architecture
 * check, then an allowlist for solutions, a denylist for the compiler, or that denylist
 * without new processes for checker programs, each widened by the calls of --allow-syscall
 * within a ceiling; its listener handed to sandbox-exec), then
 * execveat() of a file descriptor opened before the drop.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PATHS 32
#define MAX_ALLOWED 512 /* --allow-syscall numbers are below 512 (the x32 range starts there) */
#define REFUSED_UNREAD -2 /* REFUSED of a refused call whose number was not read */

struct options {
    double cpu_limit;   /* seconds of CPU before sandbox-exec kills; 0 = none */
    double wall_limit;  /* seconds of wall time, not counting time spent waiting for a CPU */
    double hard_wall;   /* seconds of wall time, all counted; 0 = none */
    long long as_limit, fsize_limit, stack_limit, nproc, nofile, cpu_rlimit;
    long uid, gid;
    const char *workdir, *in_path, *out_path, *err_path, *pch_dir;
    const char *cgroup_procs; /* a memory cgroup's cgroup.procs file the child joins */
    int netns, ipcns, seccomp_profile, landlock, exec_fd, serve;
    int reset_oom_score; /* the server lowered its own: the child puts it back to 0 */
    const char *ro[MAX_PATHS];  /* read + execute beneath */
    int n_ro;
    const char *rw[MAX_PATHS];  /* everything beneath */
    int n_rw;
    int allowed[MAX_ALLOWED]; /* --allow-syscall: calls added to the seccomp profile */
    int n_allowed;
    char **argv;
    char **envp;
};

static int err_fd = -1;     /* the child's channel to the supervisor: errors, the listener */
static int signal_fd = -1;  /* SIGCHLD (blocked), read by the supervisor's wait loop */
static pid_t supervisor_pid; /* the child's expected parent */

static void fail(const char *what) {
    char buf[512];
    int n = snprintf(buf, sizeof buf, "%s: %s", what, strerror(errno));
    if (err_fd >= 0 && n > 0) {
        ssize_t w = write(err_fd, buf, (size_t)n);
        (void)w;
    }
    _exit(127);
}

/* ---------------------------------------------------------------- Landlock */
#define LL_CREATE 444
#define LL_ADD 445
#define LL_RESTRICT 446
#define LL_VERSION 1u
#define LL_RULE_PATH 1
#define LL_RULE_NET 2
#define FS_EXECUTE (1ull << 0)
#define FS_WRITE_FILE (1ull << 1)
#define FS_READ_FILE (1ull << 2)
#define FS_READ_DIR (1ull << 3)
#define FS_TRUNCATE (1ull << 14)
#define FS_IOCTL_DEV (1ull << 15)
#define NET_BIND (1ull << 0)
#define NET_CONNECT (1ull << 1)
#define SCOPE_ABSTRACT_UNIX (1ull << 0)
#define SCOPE_SIGNAL (1ull << 1)

struct ll_ruleset_attr {
    uint64_t fs, net, scoped;
};
struct ll_path_attr {
    uint64_t allowed;
    int32_t parent_fd;
} __attribute__((packed));

static uint64_t ll_all_fs(int abi) {
    uint64_t all = (1ull << 13) - 1; /* ABI 1 */
    if (abi >= 2) all |= 1ull << 13; /* REFER */
    if (abi >= 3) all |= FS_TRUNCATE;
    if (abi >= 5) all |= FS_IOCTL_DEV;
    return all;
}

static void ll_add(int ruleset, const char *path, uint64_t access, uint64_t handled) {
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) return; /* a path this host lacks grants nothing */
    struct stat st;
    if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
        access &= FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV;
    struct ll_path_attr attr = {.allowed = access & handled, .parent_fd = fd};
    if (syscall(LL_ADD, ruleset, LL_RULE_PATH, &attr, 0) != 0) fail("landlock_add_rule");
    close(fd);
}

/* Build the ruleset while still privileged (paths may sit under directories the sandbox uid
 * cannot traverse); it is enforced later by restrict_landlock(). */
static int prepare_landlock(const struct options *o, const char *exe) {
    long abi = syscall(LL_CREATE, NULL, 0, LL_VERSION);
    if (abi < 1) fail("landlock unavailable");
    struct ll_ruleset_attr attr = {0, 0, 0};
    size_t size = 8;
    attr.fs = ll_all_fs((int)abi);
    if (abi >= 4) {
        attr.net = NET_BIND | NET_CONNECT; /* no TCP at all */
        size = 16;
    }
    if (abi >= 6) {
        attr.scoped = SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL; /* no signals out of the sandbox */
        size = 24;
    }
    int rs = (int)syscall(LL_CREATE, &attr, size, 0);
    if (rs < 0) fail("landlock_create_ruleset");
    fcntl(rs, F_SETFD, FD_CLOEXEC);
    uint64_t ro = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR;
    for (int i = 0; i < o->n_ro; i++) ll_add(rs, o->ro[i], ro, attr.fs);
    for (int i = 0; i < o->n_rw; i++) ll_add(rs, o->rw[i], attr.fs, attr.fs);
    if (exe) ll_add(rs, exe, FS_EXECUTE | FS_READ_FILE, attr.fs);
    return rs;
}

static void restrict_landlock(int rs) {
    if (syscall(LL_RESTRICT, rs, 0) != 0) fail("landlock_restrict_self");
    close(rs);
}

/* ----------------------------------------------------------------- seccomp */
/* Three base profiles (--seccomp 1, 2, 3, below), each widened by the calls a language
 * declares (--allow-syscall N, repeatable: allowed before the profile's own rules), never
 * past the ceiling (CEILING: refused whatever asks).
 *
 * A refused call: the filter returns SECCOMP_RET_USER_NOTIF and hands its listener to the
 * supervisor, whose wait loop reads which call it was (the calling thread waits in the
 * kernel meanwhile; the call never runs), kills the process group and reports the call's
 * number on the result line (REFUSED; the judge names it in the SV verdict). Where the kernel
 * gives no listener (before Linux 5.0, or one already held above sandbox-exec), the same
 * filter kills the process instead (SIGSYS: SV without the call's name). Calls of another
 * architecture or of the x32 ABI always kill (their numbers name nothing here). */
#if defined(__x86_64__)
#define AUDIT_ARCH_HERE AUDIT_ARCH_X86_64
#define X32_BIT 0x40000000u
#define LOAD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define ARG_LO(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)(16 + 8 * (i)))
#define ARG_HI(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)(20 + 8 * (i)))
/* REFUSE returns `refuse`, the refusal action of the filter being built (build_filter's
 * parameter: user notification, or killing the process). */
#define REFUSE BPF_STMT(BPF_RET | BPF_K, refuse)
#define DENY(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), REFUSE
#define ALLOW_NR(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

/* ------------------------------------------------------------------------------------
 * The ceiling: calls no --allow-syscall may add to any profile, whatever asks (a language's
 * declaration beyond the base policy stops here): each reaches beyond the run (other
 * processes, mounts, namespaces, the network, the kernel), or is one the base policy
 * decides by its arguments (clone for threads only, kill to itself, mmap never writable and
 * executable), which no declaration may widen. The same list, with the reasons, as CEILING
 * in codefu_sandbox/syscalls.py (a test compares them through --allow-syscall).
 * ---------------------------------------------------------------------------------- */
#ifndef __NR_open_tree_attr
#define __NR_open_tree_attr 467 /* Linux 6.15: older headers lack it */
#endif
#define CALL(name) {__NR_##name, #name}
static const struct {
    int nr;
    const char *name;
} CEILING[] = {
    /* other processes: tracing, reading or moving their memory */
    CALL(ptrace), CALL(process_vm_readv), CALL(process_vm_writev), CALL(kcmp),
    CALL(pidfd_getfd), CALL(process_madvise), CALL(process_mrelease), CALL(move_pages),
    CALL(migrate_pages),
    /* new processes and exec (a run is one exec and threads only) */
    CALL(fork), CALL(vfork), CALL(clone), CALL(clone3), CALL(execve), CALL(execveat),
    /* signals beyond itself */
    CALL(kill), CALL(tkill), CALL(tgkill), CALL(rt_sigqueueinfo), CALL(rt_tgsigqueueinfo),
    CALL(pidfd_open), CALL(pidfd_send_signal),
    /* writable and executable memory (personality: READ_IMPLIES_EXEC) */
    CALL(mmap), CALL(mprotect), CALL(pkey_mprotect), CALL(personality),
    /* answered by their arguments: limits of itself only, "not a terminal" */
    CALL(prlimit64), CALL(ioctl),
    /* mounts, namespaces, files by handle */
    CALL(mount), CALL(umount2), CALL(pivot_root), CALL(chroot), CALL(open_tree),
    CALL(open_tree_attr), CALL(move_mount), CALL(fsopen), CALL(fsconfig), CALL(fsmount),
    CALL(fspick), CALL(mount_setattr), CALL(unshare), CALL(setns), CALL(name_to_handle_at),
    CALL(open_by_handle_at), CALL(fanotify_init), CALL(fanotify_mark), CALL(quotactl),
    CALL(quotactl_fd), CALL(swapon), CALL(swapoff), CALL(lookup_dcookie),
    /* network */
    CALL(socket), CALL(socketpair), CALL(connect), CALL(bind), CALL(listen), CALL(accept),
    CALL(accept4),
    /* the kernel and the machine */
    CALL(bpf), CALL(perf_event_open), CALL(userfaultfd), CALL(keyctl), CALL(add_key),
    CALL(request_key), CALL(init_module), CALL(finit_module), CALL(delete_module),
    CALL(kexec_load), CALL(kexec_file_load), CALL(reboot), CALL(iopl), CALL(ioperm),
    CALL(modify_ldt), CALL(acct), CALL(syslog), CALL(sethostname), CALL(setdomainname),
    CALL(settimeofday), CALL(clock_settime), CALL(adjtimex), CALL(clock_adjtime),
    CALL(vhangup), CALL(io_uring_setup), CALL(io_uring_enter), CALL(io_uring_register),
};

/* The ceiling's entry for `nr`, or NULL. */
static const char *above_ceiling(long nr) {
    for (size_t i = 0; i < sizeof CEILING / sizeof CEILING[0]; i++)
        if (CEILING[i].nr == nr) return CEILING[i].name;
    return NULL;
}

/* ------------------------------------------------------------------------------------
 * Profile 1 (solutions): an allowlist; everything not listed is refused (the judge's SV
 * verdict). Derived from `strace -f` of the accepted solutions in
 * tests/judge/real_solutions and benchmarks/solutions and of a program using threads,
 * atomics, std::async, std::random_device, std::chrono, exceptions and iostream, all
 * compiled as the judge compiles them (g++ -O2 -static); the rest serve the dynamic
 * fallback build (no libc.a) or ordinary contest code (freopen, alarm, getrusage, ...).
 * packages/sandbox/README.md has a reason for each and says which were seen; the
 * judge-tests re-take the traces. Calls with argument checks are in run_checks below.
 * ---------------------------------------------------------------------------------- */
#define RUN_ALLOW                                                                      \
    /* I/O on stdin/stdout/stderr and files in the work dir (Landlock decides which). */ \
    ALLOW_NR(__NR_read), ALLOW_NR(__NR_write), ALLOW_NR(__NR_readv),                    \
        ALLOW_NR(__NR_writev), ALLOW_NR(__NR_pread64), ALLOW_NR(__NR_pwrite64),         \
        ALLOW_NR(__NR_lseek),    /* iostream syncs its position at exit */              \
        ALLOW_NR(__NR_openat), ALLOW_NR(__NR_open), /* freopen; the dynamic loader */   \
        ALLOW_NR(__NR_close), ALLOW_NR(__NR_fstat), ALLOW_NR(__NR_newfstatat),          \
        ALLOW_NR(__NR_stat), ALLOW_NR(__NR_lstat), ALLOW_NR(__NR_statx),                \
        ALLOW_NR(__NR_access), ALLOW_NR(__NR_faccessat), ALLOW_NR(__NR_faccessat2),     \
        ALLOW_NR(__NR_readlink), /* static glibc start-up reads /proc/self/exe */       \
        ALLOW_NR(__NR_readlinkat), ALLOW_NR(__NR_getdents64), ALLOW_NR(__NR_getcwd),    \
        ALLOW_NR(__NR_fcntl), ALLOW_NR(__NR_dup), ALLOW_NR(__NR_dup2),                  \
        ALLOW_NR(__NR_dup3),                                                           \
        /* Memory: malloc, thread stacks, vector growth (mmap/mprotect: run_filter). */  \
        ALLOW_NR(__NR_brk), ALLOW_NR(__NR_munmap), ALLOW_NR(__NR_mremap),               \
        ALLOW_NR(__NR_madvise), /* glibc frees an exited thread's stack */              \
        /* Threads (clone: run_filter). */                                              \
        ALLOW_NR(__NR_futex), ALLOW_NR(__NR_set_robust_list),                           \
        ALLOW_NR(__NR_get_robust_list), ALLOW_NR(__NR_rseq),                            \
        ALLOW_NR(__NR_set_tid_address), ALLOW_NR(__NR_exit),                            \
        ALLOW_NR(__NR_exit_group), ALLOW_NR(__NR_sched_yield),                          \
        ALLOW_NR(__NR_sched_getaffinity), /* std::thread::hardware_concurrency */       \
        ALLOW_NR(__NR_getcpu), ALLOW_NR(__NR_arch_prctl), /* TLS set-up */              \
        /* Identity and signals to itself (kill/tgkill: run_filter). */                 \
        ALLOW_NR(__NR_getpid), ALLOW_NR(__NR_gettid), ALLOW_NR(__NR_getppid),           \
        ALLOW_NR(__NR_getuid), ALLOW_NR(__NR_geteuid), ALLOW_NR(__NR_getgid),           \
        ALLOW_NR(__NR_getegid), ALLOW_NR(__NR_rt_sigaction),                            \
        ALLOW_NR(__NR_rt_sigprocmask), ALLOW_NR(__NR_rt_sigreturn),                     \
        ALLOW_NR(__NR_sigaltstack), ALLOW_NR(__NR_alarm), ALLOW_NR(__NR_setitimer),     \
        ALLOW_NR(__NR_getitimer), ALLOW_NR(__NR_restart_syscall),                       \
        /* Time (the vDSO serves most reads; these are its fallbacks) and randomness. */ \
        ALLOW_NR(__NR_clock_gettime), ALLOW_NR(__NR_clock_getres),                      \
        ALLOW_NR(__NR_clock_nanosleep), ALLOW_NR(__NR_nanosleep),                       \
        ALLOW_NR(__NR_gettimeofday), ALLOW_NR(__NR_time), ALLOW_NR(__NR_getrusage),     \
        ALLOW_NR(__NR_times), ALLOW_NR(__NR_sysinfo), ALLOW_NR(__NR_uname),             \
        ALLOW_NR(__NR_getrandom), /* std::random_device, malloc's tcache seed */        \
        ALLOW_NR(__NR_getrlimit)

/* Profile 2 (the compiler) is a denylist: g++ spawns cc1plus, as and ld, whose calls vary
 * with the toolchain. Denied: networking, tracing, kernel and admin interfaces, io_uring,
 * and what reaches beyond the run: SysV and POSIX IPC, host-wide sync, memory locking,
 * scheduling and I/O priority, inotify/fanotify. */
#define COMPILE_DENY                                                                   \
    DENY(__NR_socket), DENY(__NR_socketpair), DENY(__NR_connect), DENY(__NR_bind),     \
        DENY(__NR_listen), DENY(__NR_accept), DENY(__NR_accept4), DENY(__NR_ptrace),   \
        DENY(__NR_process_vm_readv), DENY(__NR_process_vm_writev), DENY(__NR_kcmp),    \
        DENY(__NR_mount), DENY(__NR_umount2), DENY(__NR_pivot_root), DENY(__NR_chroot), \
        DENY(__NR_unshare), DENY(__NR_setns), DENY(__NR_swapon), DENY(__NR_swapoff),   \
        DENY(__NR_reboot), DENY(__NR_sethostname), DENY(__NR_setdomainname),           \
        DENY(__NR_iopl), DENY(__NR_ioperm), DENY(__NR_init_module),                     \
        DENY(__NR_finit_module), DENY(__NR_delete_module), DENY(__NR_kexec_load),       \
        DENY(__NR_kexec_file_load), DENY(__NR_bpf), DENY(__NR_perf_event_open),         \
        DENY(__NR_userfaultfd), DENY(__NR_keyctl), DENY(__NR_add_key),                  \
        DENY(__NR_request_key), DENY(__NR_acct), DENY(__NR_quotactl),                   \
        DENY(__NR_settimeofday), DENY(__NR_clock_settime), DENY(__NR_adjtimex),         \
        DENY(__NR_clock_adjtime), DENY(__NR_syslog), DENY(__NR_io_uring_setup),         \
        DENY(__NR_io_uring_enter), DENY(__NR_io_uring_register), DENY(__NR_open_tree),  \
        DENY(__NR_move_mount), DENY(__NR_fsopen), DENY(__NR_fsconfig),                  \
        DENY(__NR_fsmount), DENY(__NR_fspick), DENY(__NR_mount_setattr),                \
        DENY(__NR_name_to_handle_at), DENY(__NR_open_by_handle_at),                     \
        DENY(__NR_fanotify_init), DENY(__NR_fanotify_mark), DENY(__NR_pidfd_getfd),     \
        DENY(__NR_personality), DENY(__NR_lookup_dcookie), DENY(__NR_shmget),           \
        DENY(__NR_shmat), DENY(__NR_shmctl), DENY(__NR_shmdt), DENY(__NR_msgget),       \
        DENY(__NR_msgsnd), DENY(__NR_msgrcv), DENY(__NR_msgctl), DENY(__NR_semget),     \
        DENY(__NR_semop), DENY(__NR_semtimedop), DENY(__NR_semctl),                     \
        DENY(__NR_mq_open), DENY(__NR_mq_unlink), DENY(__NR_mq_timedsend),              \
        DENY(__NR_mq_timedreceive), DENY(__NR_mq_notify), DENY(__NR_mq_getsetattr),     \
        DENY(__NR_sync), DENY(__NR_syncfs), DENY(__NR_mlock), DENY(__NR_mlock2),        \
        DENY(__NR_mlockall), DENY(__NR_sched_setscheduler), DENY(__NR_sched_setparam),  \
        DENY(__NR_sched_setattr), DENY(__NR_ioprio_set), DENY(__NR_setpriority),        \
        DENY(__NR_inotify_init), DENY(__NR_inotify_init1), DENY(__NR_inotify_add_watch), \
        DENY(__NR_vhangup)

#define RET(action) BPF_STMT(BPF_RET | BPF_K, (action))
#define KILL RET(SECCOMP_RET_KILL_PROCESS)
#define ALLOW RET(SECCOMP_RET_ALLOW)
#define IF_NR(nr, jt, jf) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), (jt), (jf))
#define IF_EQ(k, jt, jf) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (jt), (jf))
#define AND(k) BPF_STMT(BPF_ALU | BPF_AND | BPF_K, (k))
/* Flags a thread must have, and namespace flags it must not (no new process, no new ns). */
#define THREAD_FLAGS (CLONE_VM | CLONE_THREAD | CLONE_SIGHAND)
#define NEW_NS_FLAGS                                                                   \
    (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |      \
     CLONE_NEWPID | CLONE_NEWNET)

/* One seccomp program, assembled from a profile's parts and the declared calls. */
struct filter {
    struct sock_filter ins[BPF_MAXINSNS];
    unsigned short len;
};

static void emit(struct filter *f, const struct sock_filter *ins, size_t n) {
    if (f->len + n > BPF_MAXINSNS) {
        errno = E2BIG;
        fail("the seccomp filter is over BPF_MAXINSNS instructions");
    }
    memcpy(f->ins + f->len, ins, n * sizeof *ins);
    f->len = (unsigned short)(f->len + n);
}
#define EMIT(f, part) emit((f), (part), sizeof(part) / sizeof((part)[0]))

/* The filter of profile `o->seccomp_profile` widened by `o->allowed`, refusing with `refuse`;
 * `channel` >= 0: the descriptor the listener is handed over on (sendmsg allowed on it). */
static void build_filter(struct filter *f, const struct options *o, int exe_fd, const char *empty,
                         uint32_t refuse, int channel) {
    uint64_t ptr = (uint64_t)(uintptr_t)empty;
    uint32_t me = (uint32_t)getpid();
    int profile = o->seccomp_profile;
    struct sock_filter arch[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        IF_EQ(AUDIT_ARCH_HERE, 1, 0),
        KILL,
        LOAD_NR,
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_BIT, 0, 1),
        KILL,
    };
    /* The listener's hand-over to the supervisor, before the exec closes the channel. */
    struct sock_filter hand_over[] = {
        IF_NR(__NR_sendmsg, 0, 4),
        ARG_LO(0),
        IF_EQ((uint32_t)channel, 0, 1),
        ALLOW,
        LOAD_NR,
    };
    /* Profile 1's calls checked by their arguments (RUN_ALLOW lists the others). */
    struct sock_filter run_checks[] = {
        /* clone3 hides its flags in memory: ENOSYS makes glibc fall back to clone. */
        IF_NR(__NR_clone3, 0, 1),
        RET(SECCOMP_RET_ERRNO | ENOSYS),
        /* ioctl: "not a terminal" whatever is asked (isatty answers false; no TIOCSTI). */
        IF_NR(__NR_ioctl, 0, 1),
        RET(SECCOMP_RET_ERRNO | ENOTTY),
        /* clone: a thread of this process (std::thread), never a process or a namespace. */
        IF_NR(__NR_clone, 0, 5),
        ARG_LO(0),
        AND(THREAD_FLAGS | NEW_NS_FLAGS),
        IF_EQ(THREAD_FLAGS, 1, 0),
        REFUSE,
        ALLOW,
        /* mmap / mprotect: never writable and executable at once (static g++ output maps
         * no executable memory at all; the dynamic loader maps code read + execute). */
        IF_NR(__NR_mmap, 1, 0),
        IF_NR(__NR_mprotect, 0, 5),
        ARG_LO(2),
        AND(PROT_WRITE | PROT_EXEC),
        IF_EQ(PROT_WRITE | PROT_EXEC, 0, 1),
        REFUSE,
        ALLOW,
        /* kill / tgkill (abort, raise): only to this process. */
        IF_NR(__NR_kill, 1, 0),
        IF_NR(__NR_tgkill, 0, 4),
        ARG_LO(0),
        IF_EQ(me, 1, 0),
        REFUSE,
        ALLOW,
        /* prlimit64 (glibc's getrlimit): this process only. */
        IF_NR(__NR_prlimit64, 0, 5),
        ARG_LO(0),
        IF_EQ(0, 2, 0),
        IF_EQ(me, 1, 0),
        REFUSE,
        ALLOW,
        /* execveat: exactly the call sandbox-exec makes (our fd, our pointer, AT_EMPTY_PATH). */
        IF_NR(__NR_execveat, 0, 11),
        ARG_LO(0),
        IF_EQ((uint32_t)exe_fd, 0, 8),
        ARG_LO(1),
        IF_EQ((uint32_t)ptr, 0, 6),
        ARG_HI(1),
        IF_EQ((uint32_t)(ptr >> 32), 0, 4),
        ARG_LO(4),
        IF_EQ(AT_EMPTY_PATH, 0, 2),
        ALLOW,
        REFUSE,
        REFUSE,
        LOAD_NR,
    };
    /* Profile 3 (checker programs, compiled or a Python interpreter): the compiler's
     * denylist, and like a solution no new process (threads only), no exec but the
     * sandbox-exec's own, no signal but to itself. Its calls checked by their arguments: */
    struct sock_filter checker_checks[] = {
        IF_NR(__NR_clone3, 0, 1),
        RET(SECCOMP_RET_ERRNO | ENOSYS),
        IF_NR(__NR_clone, 0, 5),
        ARG_LO(0),
        AND(THREAD_FLAGS | NEW_NS_FLAGS),
        IF_EQ(THREAD_FLAGS, 1, 0),
        REFUSE,
        ALLOW,
        IF_NR(__NR_kill, 1, 0),
        IF_NR(__NR_tgkill, 0, 4),
        ARG_LO(0),
        IF_EQ(me, 1, 0),
        REFUSE,
        ALLOW,
        IF_NR(__NR_execveat, 0, 11),
        ARG_LO(0),
        IF_EQ((uint32_t)exe_fd, 0, 8),
        ARG_LO(1),
        IF_EQ((uint32_t)ptr, 0, 6),
        ARG_HI(1),
        IF_EQ((uint32_t)(ptr >> 32), 0, 4),
        ARG_LO(4),
        IF_EQ(AT_EMPTY_PATH, 0, 2),
        ALLOW,
        REFUSE,
        REFUSE,
        LOAD_NR,
    };
    struct sock_filter run_rest[] = {RUN_ALLOW, REFUSE};
    struct sock_filter compile_rest[] = {COMPILE_DENY, ALLOW};
    struct sock_filter checker_rest[] = {
        DENY(__NR_fork),
        DENY(__NR_vfork),
        DENY(__NR_execve),
        DENY(__NR_tkill),
        DENY(__NR_rt_sigqueueinfo),
        DENY(__NR_rt_tgsigqueueinfo),
        DENY(__NR_pidfd_open),
        DENY(__NR_pidfd_send_signal),
        COMPILE_DENY,
        ALLOW,
    };
    f->len = 0;
    EMIT(f, arch);
    if (channel >= 0) EMIT(f, hand_over);
    if (profile == 1) EMIT(f, run_checks);
    else if (profile == 3) EMIT(f, checker_checks);
    /* The declared calls, before the profile's own list: allowed (a denylist's entry too). */
    for (int i = 0; i < o->n_allowed; i++) {
        struct sock_filter allow[] = {ALLOW_NR((uint32_t)o->allowed[i])};
        EMIT(f, allow);
    }
    if (profile == 1) EMIT(f, run_rest);
    else if (profile == 3) EMIT(f, checker_rest);
    else EMIT(f, compile_rest);
}

/* Confine this process (about to exec) with its profile's filter. Returns the listener
 * (to hand over to the supervisor), or -1 when this kernel gives none and refused calls
 * kill instead. */
static int apply_seccomp(const struct options *o, int exe_fd, const char *empty) {
    static struct filter f; /* 32 KiB: not on the stack */
    int profile = o->seccomp_profile;
    if ((profile == 1 || profile == 3) && exe_fd < 0) {
        errno = EINVAL;
        fail("seccomp profiles 1 and 3 need --exec-fd 1");
    }
    build_filter(&f, o, exe_fd, empty, SECCOMP_RET_USER_NOTIF, err_fd);
    struct sock_fprog prog = {f.len, f.ins};
    long listener =
        syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
    if (listener >= 0) return (int)listener;
    /* EINVAL: no user notification here; EBUSY: a filter above us holds the listener. */
    if (errno != EINVAL && errno != EBUSY) fail("seccomp");
    build_filter(&f, o, exe_fd, empty, SECCOMP_RET_KILL_PROCESS, -1);
    prog.len = f.len;
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) fail("seccomp");
    return -1;
}
#else
static int apply_seccomp(const struct options *o, int exe_fd, const char *empty) {
    (void)o;
    (void)exe_fd;
    (void)empty;
    errno = ENOSYS;
    fail("seccomp filter not built for this architecture");
    return -1;
}
#endif

/* Room for one descriptor in a message (the listener's hand-over). */
union one_fd {
    struct cmsghdr align;
    char space[CMSG_SPACE(sizeof(int))];
};

/* `m`: a message of the one buffer `iov` and the descriptor room `control`, zeroed. */
static void one_fd_message(struct msghdr *m, struct iovec *iov, union one_fd *control) {
    memset(m, 0, sizeof *m);
    memset(control, 0, sizeof *control);
    m->msg_iov = iov;
    m->msg_iovlen = 1;
    m->msg_control = control->space;
    m->msg_controllen = sizeof control->space;
}

/* Send the seccomp listener to the supervisor over the channel (err_fd), then drop it. */
static void hand_over(int listener) {
    char byte = 'L';
    struct iovec iov = {&byte, 1};
    union one_fd control;
    struct msghdr msg;
    one_fd_message(&msg, &iov, &control);
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &listener, sizeof(int));
    if (sendmsg(err_fd, &msg, 0) != 1) fail("handing the seccomp listener over");
    close(listener);
}

/* ------------------------------------------------------------------- child */
static void set_limit(int resource, long long soft, long long hard, const char *what) {
    if (soft < 0) return;
    struct rlimit rl;
    rl.rlim_cur = soft == 0 && resource == RLIMIT_STACK ? RLIM_INFINITY : (rlim_t)soft;
    rl.rlim_max = hard == 0 && resource == RLIMIT_STACK ? RLIM_INFINITY : (rlim_t)hard;
    if (setrlimit(resource, &rl) != 0) fail(what);
}

static void open_to(const char *path, int flags, int target) {
    if (!path) return;
    int fd = open(path, flags | O_CLOEXEC, 0600);
    if (fd < 0) fail(path);
    if (dup2(fd, target) < 0) fail("dup2");
    close(fd);
}

static void join_cgroup(const char *procs) {
    int fd = open(procs, O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail(procs);
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%d\n", (int)getpid());
    if (write(fd, buf, (size_t)n) != n) fail("joining the memory cgroup");
    close(fd);
}

/* Returns 0, or -1 with errno set. */
static int write_oom_score_adj(const char *value) {
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = write(fd, value, strlen(value));
    close(fd);
    return n == (ssize_t)strlen(value) ? 0 : -1;
}

static void set_oom_score_adj(const char *value) {
    if (write_oom_score_adj(value) != 0) fail("oom_score_adj");
}

static void child(const struct options *o) {
    static const char empty[] = "";
    /* A new session: its own process group (killed as one) and no controlling terminal, so
     * /dev/tty cannot be opened and the judge's terminal, if any, is out of reach. */
    if (setsid() < 0) fail("setsid");
    /* Die with sandbox-exec; if it died before prctl took effect, we were reparented. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != supervisor_pid) _exit(127);
    /* First, while still root: every page the program touches from here on is charged. */
    if (o->cgroup_procs) join_cgroup(o->cgroup_procs);
    if (o->reset_oom_score) set_oom_score_adj("0");
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    if (o->in_path) open_to(o->in_path, O_RDONLY, 0);
    else open_to("/dev/null", O_RDONLY, 0);
    open_to(o->out_path, O_WRONLY | O_CREAT | O_TRUNC, 1);
    open_to(o->err_path, O_WRONLY | O_CREAT | O_TRUNC, 2);
    if (o->pch_dir) {
        int fd = open(o->pch_dir, O_PATH | O_DIRECTORY);
        if (fd < 0) fail(o->pch_dir);
        if (fd != 3) {
            if (dup2(fd, 3) < 0) fail("dup2 pch");
            close(fd);
        }
    }
    int exe_fd = -1;
    if (o->exec_fd) {
        exe_fd = open(o->argv[0], O_RDONLY | O_CLOEXEC);
        if (exe_fd < 0) fail(o->argv[0]);
    }
    int ruleset = o->landlock ? prepare_landlock(o, o->exec_fd ? o->argv[0] : NULL) : -1;
    if (o->netns && unshare(CLONE_NEWNET) != 0) fail("unshare(CLONE_NEWNET)");
    /* A private, empty IPC namespace: SysV objects and POSIX message queues created in it
     * vanish with the run instead of holding host memory. */
    if (o->ipcns && unshare(CLONE_NEWIPC) != 0) fail("unshare(CLONE_NEWIPC)");
    if (o->workdir && chdir(o->workdir) != 0) fail(o->workdir);
    set_limit(RLIMIT_AS, o->as_limit, o->as_limit, "RLIMIT_AS");
    set_limit(RLIMIT_FSIZE, o->fsize_limit, o->fsize_limit, "RLIMIT_FSIZE");
    set_limit(RLIMIT_STACK, o->stack_limit, o->stack_limit, "RLIMIT_STACK");
    set_limit(RLIMIT_NOFILE, o->nofile, o->nofile, "RLIMIT_NOFILE");
    set_limit(RLIMIT_CORE, 0, 0, "RLIMIT_CORE");
    set_limit(RLIMIT_MEMLOCK, 0, 0, "RLIMIT_MEMLOCK");
    set_limit(RLIMIT_MSGQUEUE, 0, 0, "RLIMIT_MSGQUEUE");
    if (o->cpu_rlimit > 0) set_limit(RLIMIT_CPU, o->cpu_rlimit, o->cpu_rlimit + 1, "RLIMIT_CPU");
    if (o->gid >= 0) {
        if (setgroups(0, NULL) != 0) fail("setgroups");
        if (setresgid((gid_t)o->gid, (gid_t)o->gid, (gid_t)o->gid) != 0) fail("setresgid");
    }
    if (o->uid >= 0) {
        /* NPROC is checked against the new uid; set it before becoming that uid. */
        set_limit(RLIMIT_NPROC, o->nproc, o->nproc, "RLIMIT_NPROC");
        if (setresuid((uid_t)o->uid, (uid_t)o->uid, (uid_t)o->uid) != 0) fail("setresuid");
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("no_new_privs");
    if (ruleset >= 0) restrict_landlock(ruleset);
    if (o->seccomp_profile) {
        int listener = apply_seccomp(o, exe_fd, empty);
        if (listener >= 0) hand_over(listener);
    }
    /* ETXTBSY: some process still holds the binary open for writing. In a threaded judge
     * that is usually a child forked by another thread (subprocess) while the compiler's
     * copy of this binary was open, and it lets go at its own exec: wait for that (at
     * most ~3 s) rather than report a judge failure. */
    for (int tries = 0;; tries++) {
        if (o->exec_fd) syscall(__NR_execveat, exe_fd, empty, o->argv, o->envp, AT_EMPTY_PATH);
        else execve(o->argv[0], o->argv, o->envp);
        if (errno != ETXTBSY || tries >= 300) break;
        struct timespec pause = {0, tries < 10 ? 1000000L : 10000000L};
        nanosleep(&pause, NULL);
    }
    fail(o->exec_fd ? "execveat" : o->argv[0]);
}

/* ------------------------------------------------------------------ parent */
static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_of(pid_t pid) {
    clockid_t cid;
    struct timespec ts;
    if (clock_getcpuclockid(pid, &cid) != 0 || clock_gettime(cid, &ts) != 0) return -1.0;
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Seconds the process's main thread spent runnable but waiting for a CPU (schedstat),
 * or 0 when the kernel does not say. */
static double runqueue_wait(pid_t pid) {
    char path[64], buf[128];
    snprintf(path, sizeof path, "/proc/%d/schedstat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0.0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0.0;
    buf[n] = 0;
    unsigned long long run_ns = 0, wait_ns = 0;
    if (sscanf(buf, "%llu %llu", &run_ns, &wait_ns) != 2) return 0.0;
    return (double)wait_ns / 1e9;
}

static void usage(void) {
    fputs("usage: codefu-sandbox-exec [options] -- PROGRAM [ARGS...]\n", stderr);
    exit(2);
}

static char refusal[256]; /* why set_option refused an option's value */

/* Add one --allow-syscall number; 0 (with `refusal`) for what is not a number below
 * MAX_ALLOWED or is above the ceiling. */
static int allow_syscall(struct options *o, const char *v) {
    char *end;
    errno = 0;
    long nr = strtol(v, &end, 10);
    if (errno || end == v || *end || nr < 0 || nr >= MAX_ALLOWED) {
        snprintf(refusal, sizeof refusal, "--allow-syscall %.32s: not a system call number "
                 "below %d", v, MAX_ALLOWED);
        return 0;
    }
#if defined(__x86_64__)
    const char *name = above_ceiling(nr);
    if (name) {
        snprintf(refusal, sizeof refusal, "--allow-syscall %ld (%s): above the sandbox's "
                 "ceiling, no profile may allow it", nr, name);
        return 0;
    }
#else
    snprintf(refusal, sizeof refusal, "--allow-syscall %ld: seccomp filters are built for "
             "x86-64 only", nr);
    return 0;
#endif
    if (o->n_allowed >= MAX_ALLOWED) {
        snprintf(refusal, sizeof refusal, "over %d --allow-syscall options", MAX_ALLOWED);
        return 0;
    }
    o->allowed[o->n_allowed++] = (int)nr;
    return 1;
}

/* Apply one "--option value" pair: 1 done, 0 an unknown option or a full list, -1 a value
 * refused (`refusal` says why). */
static int set_option(struct options *o, const char *a, const char *v, char **envs, int *n_env) {
    if (!strcmp(a, "--allow-syscall")) return allow_syscall(o, v) ? 1 : -1;
    if (!strcmp(a, "--cpu")) o->cpu_limit = atof(v);
    else if (!strcmp(a, "--wall")) o->wall_limit = atof(v);
    else if (!strcmp(a, "--hard-wall")) o->hard_wall = atof(v);
    else if (!strcmp(a, "--cpu-rlimit")) o->cpu_rlimit = atoll(v);
    else if (!strcmp(a, "--as")) o->as_limit = atoll(v);
    else if (!strcmp(a, "--fsize")) o->fsize_limit = atoll(v);
    else if (!strcmp(a, "--stack")) o->stack_limit = atoll(v);
    else if (!strcmp(a, "--nproc")) o->nproc = atoll(v);
    else if (!strcmp(a, "--nofile")) o->nofile = atoll(v);
    else if (!strcmp(a, "--uid")) o->uid = atol(v);
    else if (!strcmp(a, "--gid")) o->gid = atol(v);
    else if (!strcmp(a, "--cwd")) o->workdir = v;
    else if (!strcmp(a, "--stdin")) o->in_path = v;
    else if (!strcmp(a, "--stdout")) o->out_path = v;
    else if (!strcmp(a, "--stderr")) o->err_path = v;
    else if (!strcmp(a, "--pch-fd3")) o->pch_dir = v;
    else if (!strcmp(a, "--cgroup-procs")) o->cgroup_procs = v;
    else if (!strcmp(a, "--netns")) o->netns = atoi(v);
    else if (!strcmp(a, "--ipcns")) o->ipcns = atoi(v);
    else if (!strcmp(a, "--seccomp")) o->seccomp_profile = atoi(v);
    else if (!strcmp(a, "--landlock")) o->landlock = atoi(v);
    else if (!strcmp(a, "--exec-fd")) o->exec_fd = atoi(v);
    else if (!strcmp(a, "--serve")) o->serve = atoi(v);
    else if (!strcmp(a, "--ro") && o->n_ro < MAX_PATHS) o->ro[o->n_ro++] = v;
    else if (!strcmp(a, "--rw") && o->n_rw < MAX_PATHS) o->rw[o->n_rw++] = v;
    else if (!strcmp(a, "--env") && envs && *n_env < 63) envs[(*n_env)++] = (char *)v;
    else return 0;
    return 1;
}

/* Read the child's channel to its end (the child's exec or death): an error message (its
 * length is returned) and the seccomp listener the child may have handed over first. */
static size_t read_channel(int fd, char *msg, size_t size, int *listener) {
    size_t len = 0;
    for (;;) {
        char buf[512];
        struct iovec iov = {buf, sizeof buf};
        union one_fd control;
        struct msghdr mh;
        one_fd_message(&mh, &iov, &control);
        ssize_t n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return len;
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
            c->cmsg_len == CMSG_LEN(sizeof(int))) {
            memcpy(listener, CMSG_DATA(c), sizeof(int));
            continue;
        }
        size_t take = (size_t)n < size - 1 - len ? (size_t)n : size - 1 - len;
        memcpy(msg + len, buf, take);
        len += take;
    }
}

/* Fork, confine and exec the program in the child, wait for it under the deadlines (and
 * for a refused call), reap every descendant and print one result line. */
static void run_one(const struct options *o) {
    int channel[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, channel) != 0) {
        printf("error socketpair: %s\n", strerror(errno));
        return;
    }
    double start = now();
    pid_t pid = fork();
    if (pid < 0) {
        printf("error fork: %s\n", strerror(errno));
        close(channel[0]);
        close(channel[1]);
        return;
    }
    if (pid == 0) {
        close(channel[0]);
        err_fd = channel[1];
        child(o);
    }
    close(channel[1]);
    char msg[512];
    int listener = -1;
    size_t n = read_channel(channel[0], msg, sizeof msg, &listener);
    close(channel[0]);
    if (n > 0) {
        msg[n] = 0;
        int st;
        waitpid(pid, &st, 0);
        if (listener >= 0) close(listener);
        for (char *p = msg; *p; p++)
            if (*p == '\n') *p = ' ';
        printf("error %s\n", msg);
        return;
    }
    int killed = 0, refused = -1;
    struct pollfd watch[2] = {{signal_fd, POLLIN, 0}, {listener, POLLIN, 0}};
    for (;;) {
        double wait_s = 3600.0;
        double t = now() - start;
        if (o->hard_wall > 0) {
            if (t >= o->hard_wall) {
                killed = 2;
                break;
            }
            wait_s = o->hard_wall - t;
        }
        if (o->wall_limit > 0 && t >= o->wall_limit) {
            /* The wall backstop is for sleeping or blocked programs: time spent waiting for
             * a CPU on a loaded machine does not count, so verdicts do not depend on load. */
            double own = t - runqueue_wait(pid);
            if (own >= o->wall_limit) {
                killed = 2;
                break;
            }
            double left = o->wall_limit - own;
            if (left < 0.01) left = 0.01;
            if (left > 0.25) left = 0.25;
            if (left < wait_s) wait_s = left;
        } else if (o->wall_limit > 0 && o->wall_limit - t < wait_s) {
            wait_s = o->wall_limit - t;
        }
        if (o->cpu_limit > 0) {
            double c = cpu_of(pid);
            if (c >= 0) {
                if (c > o->cpu_limit) {
                    killed = 1;
                    break;
                }
                /* CPU cannot advance faster than wall time times threads: poll at most that late. */
                double left = o->cpu_limit - c + 0.002;
                if (left < 0.005) left = 0.005;
                if (left > 0.25) left = 0.25;
                if (left < wait_s) wait_s = left;
            }
        }
        struct timespec ts;
        ts.tv_sec = (time_t)wait_s;
        ts.tv_nsec = (long)((wait_s - (double)ts.tv_sec) * 1e9);
        if (ppoll(watch, 2, &ts, NULL) <= 0) continue; /* a deadline to check, or EINTR */
        if (watch[1].revents & POLLIN) {
            /* A refused call: its thread waits in the kernel until the kill below. Its
             * number is lost when that wait ended first (a signal, or another thread's
             * exit: ENOENT); the call did not run either way. */
            struct seccomp_notif call;
            memset(&call, 0, sizeof call);
            refused = ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &call) == 0 ? (int)call.data.nr
                                                                             : REFUSED_UNREAD;
            break;
        } else if (watch[1].revents) {
            watch[1].fd = -1; /* hung up: no process is left under the filter */
        }
        if (watch[0].revents & POLLIN) {
            struct signalfd_siginfo info;
            while (read(signal_fd, &info, sizeof info) == (ssize_t)sizeof info) {
            }
            siginfo_t state;
            memset(&state, 0, sizeof state);
            if (waitid(P_PID, (id_t)pid, &state, WEXITED | WNOHANG | WNOWAIT) == 0 && state.si_pid == pid)
                break; /* exited; still a zombie, so its pid (and group id) cannot be reused yet */
        }
    }
    /* Kill whatever is left of the process group (the compiler's passes), then reap. */
    kill(-pid, SIGKILL);
    if (killed || refused != -1) kill(pid, SIGKILL);
    int st;
    struct rusage ru;
    wait4(pid, &st, 0, &ru);
    double wall = now() - start;
    while (waitpid(-1, NULL, 0) > 0 || errno == EINTR) {
    }
    if (listener >= 0) close(listener);
    printf("ok %d %d %lld %lld %ld %lld %d %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1,
           WIFSIGNALED(st) ? WTERMSIG(st) : 0,
           (long long)ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec,
           (long long)ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec, ru.ru_maxrss,
           (long long)(wall * 1e6), killed, refused);
}

/* --serve: one run per input line of TAB-separated "--option<TAB>value" pairs. */
static int serve(const struct options *base) {
    struct options job = *base;
    if (job.cgroup_procs) {
        /* Join once, while root: the children are then born in the cgroup. */
        int fd = open(job.cgroup_procs, O_WRONLY | O_CLOEXEC);
        char buf[32];
        int n = snprintf(buf, sizeof buf, "%d\n", (int)getpid());
        if (fd < 0 || write(fd, buf, (size_t)n) != n) {
            printf("error joining the memory cgroup %s: %s\n", job.cgroup_procs, strerror(errno));
            return 1;
        }
        close(fd);
        job.cgroup_procs = NULL;
        /* The OOM killer must pick the program, never the server that reports on it. */
        if (write_oom_score_adj("-1000") == 0) job.reset_oom_score = 1;
    }
    static char line[16384];
    while (fgets(line, sizeof line, stdin)) {
        size_t len = strlen(line);
        if (len == 0 || line[len - 1] != '\n') {
            printf("error serve: a request line over %zu bytes\n", sizeof line - 2);
            return 1;
        }
        line[len - 1] = 0;
        struct options o = job;
        int ok = 1;
        char *save = NULL;
        for (char *a = strtok_r(line, "\t", &save); a && ok > 0; a = strtok_r(NULL, "\t", &save)) {
            char *v = strtok_r(NULL, "\t", &save);
            ok = v ? set_option(&o, a, v, NULL, NULL) : 0;
        }
        if (ok < 0) printf("error serve: %s\n", refusal);
        else if (!ok) printf("error serve: bad request option\n");
        else run_one(&o);
        fflush(stdout);
    }
    return 0;
}

int main(int argc, char **argv) {
    static char *empty_env[] = {NULL};
    struct options o;
    memset(&o, 0, sizeof o);
    o.as_limit = o.fsize_limit = o.stack_limit = o.nproc = o.nofile = -1;
    o.uid = o.gid = -1;
    o.envp = empty_env;
    char *envs[64];
    int n_env = 0;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (i + 1 >= argc) usage();
        int done = set_option(&o, a, argv[++i], envs, &n_env);
        if (done < 0) {
            printf("error %s\n", refusal);
            return 2;
        }
        if (!done) usage();
    }
    if (i >= argc) usage();
    envs[n_env] = NULL;
    if (n_env) o.envp = envs;
    o.argv = argv + i;

    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    signal_fd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
    if (signal_fd < 0) {
        printf("error signalfd: %s\n", strerror(errno));
        return 1;
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    prctl(PR_SET_CHILD_SUBREAPER, 1); /* orphans of the compiler come back to us to be reaped */
    supervisor_pid = getpid();
    if (o.serve) return serve(&o);
    run_one(&o);
    return 0;
}
