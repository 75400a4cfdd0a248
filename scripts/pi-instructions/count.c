/* A qemu plugin (user mode) that counts the instructions the emulated program executes, for
   scripts/pi-instructions.sh. Each time the program calls getppid, which it calls only to mark
   a point, the count so far is appended to the file named by the argument out=PATH as
   "mark N"; "exit N" at the end. sys=N names another system call (getppid is 173 on aarch64,
   110 on x86_64). Counted inline, one addition a translated block, so the count costs little. */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

static uint64_t insns;
static char out[4096] = "count.txt";
static int64_t mark_syscall = 173;

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insns,
                                             qemu_plugin_tb_n_insns(tb));
}

static void on_syscall(qemu_plugin_id_t id, unsigned int vcpu, int64_t num, uint64_t a1,
                       uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
                       uint64_t a7, uint64_t a8)
{
    if (num == mark_syscall) {
        FILE *f = fopen(out, "a");
        if (f) {
            fprintf(f, "mark %llu\n", (unsigned long long)insns);
            fclose(f);
        }
    }
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
    FILE *f = fopen(out, "a");
    if (f) {
        fprintf(f, "exit %llu\n", (unsigned long long)insns);
        fclose(f);
    }
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                           int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "out=", 4) == 0) {
            snprintf(out, sizeof out, "%s", argv[i] + 4);
        } else if (strncmp(argv[i], "sys=", 4) == 0) {
            mark_syscall = strtoll(argv[i] + 4, NULL, 10);
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
