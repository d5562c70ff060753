/**
 * PostgreSQL reads `x.f` and `(expr).f` as the call `f(x)` when `f` is not a column of `x` (attribute
 * notation), and this works on scalars too: `(42).pg_advisory_lock`, `g.pg_sleep FROM unnest(…) g`.
 * A field name cannot be told from a column by the text, so a field is refused when it names a
 * volatile built-in function callable with one argument (PostgreSQL 18, from pg_catalog:
 *   SELECT DISTINCT proname FROM pg_proc WHERE pronamespace = 'pg_catalog'::regnamespace AND prokind = 'f'
 *   AND pronargs - pronargdefaults <= 1 AND (pronargs >= 1 OR provariadic <> 0) AND provolatile = 'v'
 *   AND NOT 'internal'::regtype = ANY (proargtypes::oid[]) AND prorettype <> 'internal'::regtype),
 * or any name the policy's dangerous families or denyFunctions name. Stable and immutable ones
 * only read, and many share a name with ordinary columns (`name`, `date`, `text`).
 */
export const PG_VOLATILE_ONE_ARG: ReadonlySet<string> = new Set(
  `amvalidate array_shuffle binary_upgrade_logical_slot_has_caught_up binary_upgrade_set_next_array_pg_type_oid
  binary_upgrade_set_next_attribute_versions binary_upgrade_set_next_heap_pg_class_oid binary_upgrade_set_next_heap_relfilenode
  binary_upgrade_set_next_index_pg_class_oid binary_upgrade_set_next_index_relfilenode binary_upgrade_set_next_multirange_array_pg_type_oid
  binary_upgrade_set_next_multirange_pg_type_oid binary_upgrade_set_next_pg_authid_oid binary_upgrade_set_next_pg_enum_oid
  binary_upgrade_set_next_pg_tablespace_oid binary_upgrade_set_next_pg_type_oid binary_upgrade_set_next_toast_pg_class_oid
  binary_upgrade_set_next_toast_relfilenode binary_upgrade_set_record_init_privs brin_summarize_new_values currval
  gin_clean_pending_list lo_close lo_creat lo_create lo_get lo_import lo_tell lo_tell64 lo_unlink nextval pg_advisory_lock
  pg_advisory_lock_shared pg_advisory_unlock pg_advisory_unlock_shared pg_advisory_xact_lock pg_advisory_xact_lock_shared
  pg_backup_start pg_backup_stop pg_blocking_pids pg_cancel_backend pg_collation_actual_version pg_create_physical_replication_slot
  pg_create_restore_point pg_current_logfile pg_database_collation_actual_version pg_database_size pg_drop_replication_slot
  pg_get_multixact_members pg_get_sequence_data pg_import_system_collations pg_indexes_size pg_log_backend_memory_contexts
  pg_ls_dir pg_ls_replslotdir pg_ls_tmpdir pg_partition_ancestors pg_partition_tree pg_promote pg_read_binary_file pg_read_file
  pg_relation_size pg_replication_origin_create pg_replication_origin_drop pg_replication_origin_session_progress
  pg_replication_origin_session_setup pg_restore_attribute_stats pg_restore_relation_stats pg_safe_snapshot_blocking_pids
  pg_sequence_last_value pg_sleep pg_sleep_for pg_sleep_until pg_stat_file pg_stat_get_backend_io pg_stat_get_backend_wal
  pg_stat_get_xact_blocks_fetched pg_stat_get_xact_blocks_hit pg_stat_get_xact_function_calls pg_stat_get_xact_function_self_time
  pg_stat_get_xact_function_total_time pg_stat_get_xact_numscans pg_stat_get_xact_tuples_deleted pg_stat_get_xact_tuples_fetched
  pg_stat_get_xact_tuples_hot_updated pg_stat_get_xact_tuples_inserted pg_stat_get_xact_tuples_newpage_updated
  pg_stat_get_xact_tuples_returned pg_stat_get_xact_tuples_updated pg_stat_reset_backend_stats pg_stat_reset_replication_slot
  pg_stat_reset_shared pg_stat_reset_single_function_counters pg_stat_reset_single_table_counters pg_stat_reset_slru
  pg_stat_reset_subscription_stats pg_table_size pg_tablespace_size pg_terminate_backend pg_total_relation_size pg_try_advisory_lock
  pg_try_advisory_lock_shared pg_try_advisory_xact_lock pg_try_advisory_xact_lock_shared pg_xact_commit_timestamp
  pg_xact_commit_timestamp_origin pg_xact_status plpgsql_validator random_normal setseed ts_stat txid_status uuidv7`.split(/\s+/),
);
