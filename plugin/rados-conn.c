/* rados-conn.c: a connection to a Ceph cluster with our settings (see
 * rados-conn.h): the conf file, the client's name and keyring, and every
 * wait bounded (client_mount_timeout, rados_mon_op_timeout,
 * rados_osd_op_timeout), so a cluster that does not answer fails a call
 * instead of hanging it.
 */
#if defined HAVE_RBD || defined HAVE_RADOS

#include <stdio.h>

#include "rados-conn.h"

int
rados_conn_open (rados_t *c, const struct rados_conn_cfg *cfg,
                 const char **step)
{
  char t[32];
  int err;

  snprintf (t, sizeof t, "%llu", cfg->timeout);
  *step = "rados_create";
  err = rados_create (c, cfg->id);
  if (err < 0) {
    *c = NULL;
    return err;
  }
  *step = "reading the conf";
  err = rados_conf_read_file (*c, cfg->conf);
  if (err < 0)
    goto fail;
  *step = "rados_conf_set";
  if ((cfg->keyring && (err = rados_conf_set (*c, "keyring", cfg->keyring)))
      || (cfg->rbd_cache
          && (err = rados_conf_set (*c, "rbd_cache", cfg->rbd_cache)))
      || (err = rados_conf_set (*c, "rados_osd_op_timeout", t))
      || (err = rados_conf_set (*c, "rados_mon_op_timeout", t))
      || (err = rados_conf_set (*c, "client_mount_timeout", t)))
    goto fail;
  *step = "connecting to the cluster";
  err = rados_connect (*c);
  if (err < 0)
    goto fail;
  return 0;

 fail:
  rados_shutdown (*c);
  *c = NULL;
  return err;
}

#endif
