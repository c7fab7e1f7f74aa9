package media

import (
	"slices"
	"strings"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// maxAdditionalOwners caps initialize's additional_owners.
const maxAdditionalOwners = 100

// registerRules names the body rules of the media endpoints on val.
func registerRules(val *validation.Validator) {
	val.MustRegisterRule("media_type_of_category", typeOfCategoryRule)
	val.MustRegisterRule("media_total_bytes", totalBytesRule)
	val.MustRegisterRule("media_owners", ownersRule)
}

// categoryOf is the category of an initialize request: its own, else the
// media type's default one.
func categoryOf(req initializeRequest) string {
	if req.MediaCategory != "" {
		return req.MediaCategory
	}
	return storage.DefaultMediaCategory(req.MediaType)
}

// typeOfCategoryRule: the media type is one the category takes (an
// unknown category is the media_category enum's business).
func typeOfCategoryRule(f validation.Field) *validation.Problem {
	req, ok := f.Request.Interface().(initializeRequest)
	if !ok {
		return nil
	}
	category := categoryOf(req)
	accepted := storage.MediaTypesOf(category)
	if len(accepted) == 0 || slices.Contains(accepted, req.MediaType) {
		return nil
	}
	return validation.Problemf([]string{req.MediaType}, "The `%[1]s` field value [%[2]s] is not a type the media category %[3]s takes: [%[4]s].",
		req.MediaType, category, strings.Join(accepted, ","))
}

// totalBytesRule: the declared size is positive (the caller's limits are
// checkSize's).
func totalBytesRule(f validation.Field) *validation.Problem {
	if n := f.Value.Int(); n <= 0 {
		return validation.Problemf(nil, "The `%[1]s` field value [%[2]d] must be a positive integer: the size of the media in bytes.", n)
	}
	return nil
}

// ownersRule: additional_owners are at most maxAdditionalOwners user ids,
// each given once (the uploader and unknown users are checkOwners').
func ownersRule(f validation.Field) *validation.Problem { return ownersProblem(f.Strings()) }

// ownersProblem is what is wrong with a list of additional owners (nil
// when nothing is), for the rule and for the one-shot upload's form.
func ownersProblem(raw []string) *validation.Problem {
	if len(raw) > maxAdditionalOwners {
		return validation.Problemf([]string{}, "The `%[1]s` field lists %[2]d users; at most %[3]d may be given.", len(raw), maxAdditionalOwners)
	}
	owners := make([]int64, 0, len(raw))
	for _, s := range raw {
		id, ok := validation.ParseID(s)
		switch {
		case !ok:
			return validation.Problemf([]string{s}, "The `%[1]s` field value [%[2]s] does not match %[3]s.", s, validation.IDPattern)
		case slices.Contains(owners, id):
			return validation.Problemf([]string{s}, "The `%[1]s` field names user [%[2]s] more than once.", s)
		}
		owners = append(owners, id)
	}
	return nil
}
