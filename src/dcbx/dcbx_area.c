/* The DCBX area: the host's Ethernet ports' DCBX (dcbxEnable), from the
 * kernel, independent of the fabric. If the kernel's socket cannot be
 * opened, DCBX is not served and the daemon runs on. */
#include "ibsnmpd/netsnmp.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/area.h"

#include "dcbx_internal.h"

struct dcbx_config dcbx_cfg;

struct dcbx_area {
	struct dcbx_backend backend;
	struct cache_observer notified;
	struct dcbx_mib mib;
	bool running;         /* the socket could be opened */
};

static const struct cache_decl caches[] = {
	{17, "dcbx", 10, offsetof(struct dcbx_area, backend.group)},
};

static void *start(const struct area_env *env)
{
	struct dcbx_area *a = calloc(1, sizeof(*a));

	(void)env;
	if (!a)
		return NULL;
	a->running = !dcbx_backend_start(&a->backend, config_cache_lifetime(&caches[0]));
	if (a->running)
		cache_group_observe(&a->backend.group, &a->notified, dcbx_notify_published, a);
	return a;
}

static int register_handlers(void *self)
{
	struct dcbx_area *a = self;

	return a->running ? dcbx_mib_register(&a->mib, &a->backend, NULL) : 0;
}

static void unregister_handlers(void *self)
{
	struct dcbx_area *a = self;

	if (a->running)
		dcbx_mib_unregister(&a->mib);
}

static void reload(void *self)
{
	struct dcbx_area *a = self;

	if (a->running)
		dcbx_backend_apply_config(&a->backend, config_cache_lifetime(&caches[0]));
}

static void stop(void *self)
{
	struct dcbx_area *a = self;

	if (a->running)
		dcbx_backend_stop(&a->backend);
	free(a);
}

static bool wanted(void)
{
	return dcbx_cfg.enabled;
}

static void parse_interface(const char *token, char *line)
{
	char name[64], extra[2];

	if (!line || sscanf(line, "%63s %1s", name, extra) != 1 || strlen(name) >= 16) {
		config_report(token, line, "expected one interface name (at most 15 characters)");
		return;
	}
	if (dcbx_cfg.n_interfaces == 32) {
		config_report(token, line, "too many dcbxInterface lines (at most 32)");
		return;
	}
	memcpy(dcbx_cfg.interfaces[dcbx_cfg.n_interfaces++], name, strlen(name) + 1);
}

static void defaults(void)
{
	memset(&dcbx_cfg, 0, sizeof(dcbx_cfg));
	dcbx_cfg.enabled = true;
}

static const struct config_token tokens[] = {
	{"dcbxEnable", CONFIG_BOOL, &dcbx_cfg.enabled, .help = "yes|no"},
	{"dcbxInterface", CONFIG_CUSTOM, .parse = parse_interface, .help = "IFNAME"},
	{"dcbxSocket", CONFIG_PATH, dcbx_cfg.socket, sizeof(dcbx_cfg.socket), .help = "PATH"},
};

static struct cache_group *alarm_group(void *self)
{
	return &((struct dcbx_area *)self)->backend.group;
}

const struct area_def dcbx_area_def = {
	.name = "DCBX",
	AREA_CONFIG(tokens, dcbx_cfg, defaults),
	.wanted = wanted,
	.enable_token = "dcbxEnable",
	AREA_CACHES(caches),
	.start = start,
	.register_mib = register_handlers,
	.reload = reload,
	.unregister_mib = unregister_handlers,
	.stop = stop,
	.alarm_group = alarm_group,
	.alarm_collect = dcbx_alarms,
};
