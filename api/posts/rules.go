package posts

import (
	"slices"

	"github.com/aviary-dev/aviary/domain/posttext"
	"github.com/aviary-dev/aviary/validation"
)

// registerRules names the body rules of the post endpoints on val (the
// shared ones, coreid, coreids and length, are validation's).
func registerRules(val *validation.Validator) {
	val.MustRegisterRule("post_text", textRule)
	val.MustRegisterRule("post_media_ids", mediaIDsRule)
	val.MustRegisterRule("post_edit_alone", editAloneRule)
}

// textRule checks the post's text: required unless the post carries media
// (as on the platform), and when given, visible and within the platform's
// weighted length (docs/post-text.md).
func textRule(f validation.Field) *validation.Problem {
	text := ""
	if f.Given() {
		text = f.Value.String()
	}
	if text == "" {
		if req, ok := f.Request.Interface().(createRequest); ok && req.Media != nil {
			return nil
		}
		return validation.Problemf([]string{}, "The `%[1]s` field is required and can not be empty.")
	}
	if blank(text) {
		return validation.Problemf([]string{text}, "The `%[1]s` field must contain at least one visible character, not only whitespace.")
	}
	if n := posttext.WeightedLength(text); n > posttext.MaxWeightedLength {
		return validation.Problemf([]string{}, "The `%[1]s` field is %[2]d characters long as the platform counts them; the limit is %[3]d.", n, posttext.MaxWeightedLength)
	}
	return nil
}

// mediaIDsRule checks the attachment list's size and ids; a repeated id is
// refused.
func mediaIDsRule(f validation.Field) *validation.Problem {
	raw := f.Strings()
	if len(raw) == 0 || len(raw) > maxPostMedia {
		return validation.Problemf(append([]string{}, raw...), "The `%[1]s` field must list 1 to %[2]d media ids; it lists %[3]d.", maxPostMedia, len(raw))
	}
	ids := make([]int64, 0, len(raw))
	for _, s := range raw {
		id, ok := validation.ParseID(s)
		if !ok {
			return validation.Problemf([]string{s}, "The `%[1]s` field value [%[2]s] does not match %[3]s.", s, validation.IDPattern)
		}
		if slices.Contains(ids, id) {
			return validation.Problemf([]string{s}, "The `%[1]s` field lists the media [%[2]s] more than once.", s)
		}
		ids = append(ids, id)
	}
	return nil
}

// editAloneRule: an edit (edit_options) changes the text and media only.
func editAloneRule(f validation.Field) *validation.Problem {
	req, ok := f.Request.Interface().(createRequest)
	if !ok || req.Reply == nil && req.QuoteTweetID == nil && req.Geo == nil {
		return nil
	}
	return validation.Problemf([]string{f.Value.String()}, "An edit changes the text and media only; leave out reply, quote_tweet_id and geo.")
}
