/* OpenND: SAL annotations, as ND code is written with them.
 *
 * The new-style names (_In_, _Out_writes_(n), _Outptr_result_maybenull_ ...)
 * and the SAL 1 _In_bytecount_ style that Microsoft's ndsupport.h and the ND
 * v1 SPI use, each defined to nothing unless the program defined it first.
 * The old __in/__out names would break the C++ standard library (libstdc++
 * names parameters __in, __out and __success) and are deliberately not
 * defined. Included by <opennd/win32.h>.
 */
#ifndef OPENND_SAL_H
#define OPENND_SAL_H

#ifndef _In_
#define _In_
#endif
#ifndef _In_opt_
#define _In_opt_
#endif
#ifndef _In_z_
#define _In_z_
#endif
#ifndef _In_opt_z_
#define _In_opt_z_
#endif
#ifndef _Out_
#define _Out_
#endif
#ifndef _Out_opt_
#define _Out_opt_
#endif
#ifndef _Inout_
#define _Inout_
#endif
#ifndef _Inout_opt_
#define _Inout_opt_
#endif
#ifndef _Inout_z_
#define _Inout_z_
#endif
#ifndef _Inout_opt_z_
#define _Inout_opt_z_
#endif
#ifndef _Outptr_
#define _Outptr_
#endif
#ifndef _Outptr_opt_
#define _Outptr_opt_
#endif
#ifndef _Outptr_result_maybenull_
#define _Outptr_result_maybenull_
#endif
#ifndef _Outptr_opt_result_maybenull_
#define _Outptr_opt_result_maybenull_
#endif
#ifndef _Outptr_result_nullonfailure_
#define _Outptr_result_nullonfailure_
#endif
#ifndef _Outptr_result_z_
#define _Outptr_result_z_
#endif
#ifndef _Deref_out_
#define _Deref_out_
#endif
#ifndef _Deref_out_opt_
#define _Deref_out_opt_
#endif
#ifndef _Deref_in_
#define _Deref_in_
#endif
#ifndef _Deref_inout_
#define _Deref_inout_
#endif
#ifndef _Ret_maybenull_
#define _Ret_maybenull_
#endif
#ifndef _Ret_notnull_
#define _Ret_notnull_
#endif
#ifndef _Ret_z_
#define _Ret_z_
#endif
#ifndef _Printf_format_string_
#define _Printf_format_string_
#endif
#ifndef _Check_return_
#define _Check_return_
#endif
#ifndef _Must_inspect_result_
#define _Must_inspect_result_
#endif
#ifndef _Use_decl_annotations_
#define _Use_decl_annotations_
#endif
#ifndef _Reserved_
#define _Reserved_
#endif
#ifndef _Frees_ptr_
#define _Frees_ptr_
#endif
#ifndef _Frees_ptr_opt_
#define _Frees_ptr_opt_
#endif
#ifndef _Post_invalid_
#define _Post_invalid_
#endif
#ifndef _Pre_notnull_
#define _Pre_notnull_
#endif
#ifndef _Maybenull_
#define _Maybenull_
#endif
#ifndef _Notnull_
#define _Notnull_
#endif
#ifndef _Null_terminated_
#define _Null_terminated_
#endif
#ifndef _Interlocked_operand_
#define _Interlocked_operand_
#endif
#ifndef _In_reads_
#define _In_reads_(x)
#endif
#ifndef _In_reads_opt_
#define _In_reads_opt_(x)
#endif
#ifndef _In_reads_bytes_
#define _In_reads_bytes_(x)
#endif
#ifndef _In_reads_bytes_opt_
#define _In_reads_bytes_opt_(x)
#endif
#ifndef _In_reads_z_
#define _In_reads_z_(x)
#endif
#ifndef _Out_writes_
#define _Out_writes_(x)
#endif
#ifndef _Out_writes_opt_
#define _Out_writes_opt_(x)
#endif
#ifndef _Out_writes_bytes_
#define _Out_writes_bytes_(x)
#endif
#ifndef _Out_writes_bytes_opt_
#define _Out_writes_bytes_opt_(x)
#endif
#ifndef _Out_writes_z_
#define _Out_writes_z_(x)
#endif
#ifndef _Out_writes_all_
#define _Out_writes_all_(x)
#endif
#ifndef _Out_writes_bytes_all_
#define _Out_writes_bytes_all_(x)
#endif
#ifndef _Inout_updates_
#define _Inout_updates_(x)
#endif
#ifndef _Inout_updates_opt_
#define _Inout_updates_opt_(x)
#endif
#ifndef _Inout_updates_bytes_
#define _Inout_updates_bytes_(x)
#endif
#ifndef _Inout_updates_bytes_opt_
#define _Inout_updates_bytes_opt_(x)
#endif
#ifndef _Inout_updates_z_
#define _Inout_updates_z_(x)
#endif
#ifndef _Outptr_result_buffer_
#define _Outptr_result_buffer_(x)
#endif
#ifndef _Outptr_result_bytebuffer_
#define _Outptr_result_bytebuffer_(x)
#endif
#ifndef _Ret_writes_maybenull_
#define _Ret_writes_maybenull_(x)
#endif
#ifndef _Ret_writes_bytes_maybenull_
#define _Ret_writes_bytes_maybenull_(x)
#endif
#ifndef _Field_size_
#define _Field_size_(x)
#endif
#ifndef _Field_size_opt_
#define _Field_size_opt_(x)
#endif
#ifndef _Field_size_bytes_
#define _Field_size_bytes_(x)
#endif
#ifndef _Field_size_bytes_opt_
#define _Field_size_bytes_opt_(x)
#endif
#ifndef _Success_
#define _Success_(x)
#endif
#ifndef _Return_type_success_
#define _Return_type_success_(x)
#endif
#ifndef _Analysis_assume_
#define _Analysis_assume_(x)
#endif
#ifndef _Pre_satisfies_
#define _Pre_satisfies_(x)
#endif
#ifndef _Post_satisfies_
#define _Post_satisfies_(x)
#endif
#ifndef _Post_writable_byte_size_
#define _Post_writable_byte_size_(x)
#endif
#ifndef _Acquires_lock_
#define _Acquires_lock_(x)
#endif
#ifndef _Releases_lock_
#define _Releases_lock_(x)
#endif
#ifndef _Requires_lock_held_
#define _Requires_lock_held_(x)
#endif
#ifndef _Guarded_by_
#define _Guarded_by_(x)
#endif
#ifndef _In_bytecount_
#define _In_bytecount_(x)
#endif
#ifndef _In_opt_bytecount_
#define _In_opt_bytecount_(x)
#endif
#ifndef _In_count_
#define _In_count_(x)
#endif
#ifndef _In_opt_count_
#define _In_opt_count_(x)
#endif
#ifndef _Out_bytecap_
#define _Out_bytecap_(x)
#endif
#ifndef _Out_opt_bytecap_
#define _Out_opt_bytecap_(x)
#endif
#ifndef _Out_cap_
#define _Out_cap_(x)
#endif
#ifndef _Out_opt_cap_
#define _Out_opt_cap_(x)
#endif
#ifndef _Inout_bytecap_
#define _Inout_bytecap_(x)
#endif
#ifndef _Inout_opt_bytecap_
#define _Inout_opt_bytecap_(x)
#endif
#ifndef _Out_writes_to_
#define _Out_writes_to_(a, b)
#endif
#ifndef _Out_writes_to_opt_
#define _Out_writes_to_opt_(a, b)
#endif
#ifndef _Out_writes_bytes_to_
#define _Out_writes_bytes_to_(a, b)
#endif
#ifndef _Out_writes_bytes_to_opt_
#define _Out_writes_bytes_to_opt_(a, b)
#endif
#ifndef _In_range_
#define _In_range_(a, b)
#endif
#ifndef _Out_range_
#define _Out_range_(a, b)
#endif
#ifndef _Deref_out_range_
#define _Deref_out_range_(a, b)
#endif
#ifndef _Ret_range_
#define _Ret_range_(a, b)
#endif
#ifndef _Field_range_
#define _Field_range_(a, b)
#endif
#ifndef _When_
#define _When_(a, b)
#endif
#ifndef _At_
#define _At_(a, b)
#endif
#ifndef _Out_bytecap_post_bytecount_
#define _Out_bytecap_post_bytecount_(a, b)
#endif
#ifndef _Out_opt_bytecap_post_bytecount_
#define _Out_opt_bytecap_post_bytecount_(a, b)
#endif
#ifndef _Out_cap_post_count_
#define _Out_cap_post_count_(a, b)
#endif
#ifndef _Out_opt_cap_post_count_
#define _Out_opt_cap_post_count_(a, b)
#endif

#endif /* OPENND_SAL_H */
