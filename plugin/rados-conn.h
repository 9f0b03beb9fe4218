/* rados-conn.h: a connection to a Ceph cluster with our settings, for
 * backend=rbd (backend-rbd.c) and the exchange across servers
 * (gateway.c); built where librados is (HAVE_RBD or HAVE_RADOS).
 *
 * Threads: any; it touches nothing shared.
 */
#ifndef CFQ_RADOS_CONN_H
#define CFQ_RADOS_CONN_H

#if defined HAVE_RBD || defined HAVE_RADOS

#include <rados/librados.h>

struct rados_conn_cfg {
  const char *conf;             /* ceph.conf, or NULL: librados' search */
  const char *id;               /* the client's name, or NULL: "admin" */
  const char *keyring;          /* a path, or NULL: the conf's */
  const char *rbd_cache;        /* librbd's rbd_cache ("true", "false"),
                                   or NULL: librbd's default */
  unsigned long long timeout;   /* s: every wait for the cluster (mount,
                                   monitor and OSD operations) */
};

/* Create *c, read the conf, apply cfg and connect: 0, or -errno with *c
 * NULL (nothing to shut down) and *step saying what failed
 * ("rados_create", "reading the conf", "rados_conf_set", "connecting to
 * the cluster").  Blocks up to cfg->timeout.
 */
extern int rados_conn_open (rados_t *c, const struct rados_conn_cfg *cfg,
                            const char **step);

#endif

#endif /* CFQ_RADOS_CONN_H */
