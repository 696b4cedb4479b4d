/*
 * plugrt devices: the devices plugrt knows and whether it can use each one
 * here. A usable device is described by prt_device_get_info (name, compute
 * capability, memory, multiprocessors); for one it cannot use, the reason
 * is prt_device_check's message (no CUDA in this build, no driver, no GPU).
 * Either way the answer is the information asked for, so the exit status
 * is 0.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "options.h"
#include "text.h"

enum { OPT_HELP = 1, OPT_JSON };

static const cli_opt devices_opts[] = {
    {"--help", "-h", 0, OPT_HELP},
    {"--json", NULL, 0, OPT_JSON},
    {NULL, NULL, 0, 0},
};

static void devices_help(void)
{
    printf("Usage: plugrt devices [--json]\n"
           "\n"
           "Lists the devices plugrt can build for and run on (cpu, cuda) and whether\n"
           "each is usable here: for a usable GPU its name, compute capability, memory\n"
           "and multiprocessors; for a device that is not usable, the reason.\n"
           "\n"
           "Options:\n"
           "  --json       machine-readable output (one JSON document)\n"
           "  -h, --help   this help\n"
           "\n"
           "Exit status: 0 (a device that is not usable is an answer, not a failure),\n"
           "2 usage.\n");
}

/* One device: usable with its info, or not with the reason. */
typedef struct device_state {
    int32_t device;
    int usable;
    prt_device_info info;
    char reason[1024];  /* the library's message */
    const char *status; /* its status name */
} device_state;

static void probe(int32_t device, device_state *d)
{
    prt_status st = prt_device_check(device);
    memset(d, 0, sizeof *d);
    d->device = device;
    d->info.struct_size = sizeof d->info;
    if (!st)
        st = prt_device_get_info(device, &d->info);
    d->usable = st == PRT_OK;
    if (!d->usable) {
        snprintf(d->reason, sizeof d->reason, "%s", prt_last_error());
        d->status = prt_status_name(st);
    }
}

static void print_text(const device_state *d)
{
    char name[CLI_ESC_CAP], mem[32];
    const char *dev = cli_device_name(d->device);
    if (!d->usable) {
        printf("  %-5s not usable: %s [%s]\n", dev, d->reason, d->status);
        return;
    }
    if (d->device == PRT_DEVICE_CPU) {
        printf("  %-5s usable\n", dev);
        return;
    }
    printf("  %-5s usable: %s, compute capability %d.%d, %s, %d multiprocessors\n", dev,
           cli_escape(d->info.name, name, sizeof name), (int)d->info.cc_major,
           (int)d->info.cc_minor, cli_format_bytes(d->info.memory_bytes, mem, sizeof mem),
           (int)d->info.multiprocessors);
}

static void print_json(json_writer *w, const device_state *d)
{
    json_begin_object(w, NULL);
    json_string(w, "device", cli_device_name(d->device));
    json_bool(w, "usable", d->usable);
    if (d->usable) {
        json_string(w, "name", d->info.name);
    }
    if (d->usable && d->device != PRT_DEVICE_CPU) {
        json_int(w, "cc_major", d->info.cc_major);
        json_int(w, "cc_minor", d->info.cc_minor);
        json_int(w, "multiprocessors", d->info.multiprocessors);
        json_int(w, "memory_bytes", d->info.memory_bytes);
    }
    if (!d->usable) {
        json_string(w, "reason", d->reason);
        json_string(w, "status", d->status);
    }
    json_end_object(w);
}

int cmd_devices(int argc, char **argv)
{
    static const int32_t devices[] = {PRT_DEVICE_CPU, PRT_DEVICE_CUDA};
    device_state st[sizeof devices / sizeof devices[0]];
    const int n = (int)(sizeof devices / sizeof devices[0]);
    cli_scanner s;
    const char *v;
    int id, json = 0;
    json_writer w;
    cli_scan_init(&s, argc, argv, devices_opts);
    while ((id = cli_scan_next(&s, &v)) != CLI_SCAN_END) {
        switch (id) {
        case CLI_SCAN_ERROR:
            return CLI_USAGE;
        case CLI_SCAN_POSITIONAL:
            return cli_usage("unexpected argument '%s'", v);
        case OPT_HELP:
            devices_help();
            return CLI_OK;
        case OPT_JSON:
            json = 1;
            break;
        default:
            return cli_usage("internal: unhandled option");
        }
    }
    for (int i = 0; i < n; i++)
        probe(devices[i], &st[i]);
    if (json) {
        json_init(&w, stdout);
        json_begin_object(&w, NULL);
        json_string(&w, "plugrt_version", prt_version_string());
        json_begin_array(&w, "devices");
        for (int i = 0; i < n; i++)
            print_json(&w, &st[i]);
        json_end_array(&w);
        json_end_object(&w);
        json_finish(&w);
    } else {
        printf("devices:\n");
        for (int i = 0; i < n; i++)
            print_text(&st[i]);
    }
    return fflush(stdout) == 0 ? CLI_OK : CLI_FAIL;
}
